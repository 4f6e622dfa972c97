//! Helps applied to a plan's text as a user would apply them, for the
//! tests that check a help before trusting it.

/// The plan with the help applied, as a user would: "declare `event
/// e[r];`" adds the declaration first in the plan; "add `wait e[i];` on
/// stream `s` before `op`" puts the `wait` on the line before `op`'s in
/// `s`'s block, and "`record e[i];` on stream `s` after `op`" the `record`
/// on the line after it.
pub fn applied(plan: &str, help: &str) -> String {
    let mut lines: Vec<String> = plan.lines().map(str::to_owned).collect();
    // The help's instructions, each "add `what` on stream `s` before/after
    // `op`"; what follows a colon explains.
    let instructions = (outside_code(help, ": ").into_iter())
        .flat_map(|piece| outside_code(&piece, ", "))
        .filter(|part| {
            ["add `", "and `", "declare `event"]
                .iter()
                .any(|start| part.starts_with(start))
        });
    for part in instructions {
        let part = part.as_str();
        let quoted: Vec<&str> = part.split('`').skip(1).step_by(2).collect();
        if part.contains("declare `event") {
            let declaration = quoted[0];
            let plan = (lines.iter())
                .position(|l| l.trim_start().starts_with("plan "))
                .unwrap();
            lines.insert(plan + 1, declaration.to_owned());
            continue;
        }
        let (Some(what), Some(stream), Some(op)) = (quoted.first(), quoted.get(1), quoted.get(2))
        else {
            continue;
        };
        // The op in a block of the stream (up to the block's `}`).
        let opens = |l: &str| {
            let l = l.trim();
            l.starts_with(&format!("on {stream} ")) || l.starts_with(&format!("on {stream}["))
        };
        let is_op = |l: &str| {
            let line = l.trim().trim_end_matches(';');
            !line.is_empty() && op.starts_with(line.split('<').next().unwrap())
        };
        let at = (0..lines.len())
            .filter(|&block| opens(&lines[block]))
            .find_map(|block| {
                (block + 1..lines.len())
                    .take_while(|&i| lines[i].trim() != "}")
                    .find(|&i| is_op(&lines[i]))
            })
            .unwrap_or_else(|| panic!("the op in the block: {part}\n{}", lines.join("\n")));
        let at = if part.contains(" after `") {
            at + 1
        } else {
            at
        };
        lines.insert(at, (*what).to_owned());
    }
    lines.join("\n")
}

/// `text` split at each `separator` that is not inside backticks (an op's
/// label may hold `, ` itself: `min(c * m, len)`).
fn outside_code(text: &str, separator: &str) -> Vec<String> {
    let (mut parts, mut current, mut code) = (Vec::new(), String::new(), false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !code && rest.starts_with(separator) {
            parts.push(std::mem::take(&mut current));
            rest = &rest[separator.len()..];
            continue;
        }
        code ^= c == '`';
        current.push(c);
        rest = &rest[c.len_utf8()..];
    }
    parts.push(current);
    parts
}
