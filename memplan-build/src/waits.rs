//! Which kernels wait for the work queued before them before they touch
//! memory, proved from the PTX nvcc wrote for each architecture.
//!
//! A kernel that opens with `cudaGridDependencySynchronize()` (the PTX
//! instruction `griddepcontrol.wait`) reads and writes nothing until the
//! grids it depends on have finished and their memory is visible: such a
//! kernel may be launched while the work before it still runs
//! (programmatic dependent launch), which takes a chain of small kernels
//! from about 0.9 to 0.6 us a kernel on an H200. Whether a body waits
//! first is a fact about the body, so it is read from the compiled code,
//! never taken on trust: in each `.entry`, `griddepcontrol.wait` must come
//! before anything but reading the kernel's parameters, moving and
//! converting values between registers, and letting dependents start
//! (`griddepcontrol.launch_dependents`). A label, a branch, any other
//! load, a store, an atomic, a call, or a block of inline assembly before
//! it, and the entry is not proved. nvcc compiles such an opening to
//! exactly that (`ld.param`, `cvta.to.global`, the two `griddepcontrol`
//! instructions, then the body).

/// Which of a kernel's compiled forms wait first, by architecture: its
/// machine code for each `sm_X` (made from `compute_X` PTX) and its PTX
/// for each `compute_X` the fatbin carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forms {
    pub machine_code: Vec<(u32, bool)>,
    pub ptx: Vec<(u32, bool)>,
}

impl Forms {
    /// The forms of the kernel `symbol`, where `waiting` lists, for each
    /// architecture whose PTX nvcc kept, the entries that wait first; an
    /// architecture without its PTX is not proved.
    pub fn of(
        symbol: &str,
        waiting: &[(u32, Vec<String>)],
        machine_code: &[u32],
        ptx: &[u32],
    ) -> Forms {
        let waits = |arch: u32| {
            waiting
                .iter()
                .any(|(at, entries)| *at == arch && entries.iter().any(|e| e == symbol))
        };
        Forms {
            machine_code: machine_code
                .iter()
                .map(|&arch| (arch, waits(arch)))
                .collect(),
            ptx: ptx.iter().map(|&arch| (arch, waits(arch))).collect(),
        }
    }
}

/// For each kept PTX (`("compute_90", text)`), its architecture and the
/// entries that wait first; PTX of a name that is not `compute_X` is left
/// out.
pub fn waiting_by_architecture(ptx: &[(String, String)]) -> Vec<(u32, Vec<String>)> {
    ptx.iter()
        .filter_map(|(name, text)| {
            let arch = name.strip_prefix("compute_")?.parse().ok()?;
            Some((arch, entries_that_wait_first(text)))
        })
        .collect()
}

/// The entries of `ptx` (their names: the kernels' symbols) whose bodies
/// wait first.
pub fn entries_that_wait_first(ptx: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        let after = &rest[at + ".entry".len()..];
        rest = after;
        // `.entry` as a word, followed by the name and its parameters.
        if !after.starts_with(char::is_whitespace) {
            continue;
        }
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|&c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            .collect();
        let Some(body) = body_after(after) else {
            continue;
        };
        if !name.is_empty() && waits_first(body) {
            found.push(name);
        }
    }
    found
}

/// The text between the `{` that opens an entry's body (after its
/// parameter list) and the first `}`; `None` where there is none.
fn body_after(entry: &str) -> Option<&str> {
    let params_end = entry.find(')')?;
    let open = params_end + entry[params_end..].find('{')?;
    let body = &entry[open + 1..];
    Some(&body[..body.find('}')?])
}

/// Whether `griddepcontrol.wait` comes first in `body`, as the module's
/// documentation says, read statement by statement (inline assembly puts
/// several on a line). A block comment, or a `{` (a scope of inline
/// assembly), before it is not read, and so not proved; debug line
/// directives (`.loc`, from `-lineinfo`) are no instructions.
fn waits_first(body: &str) -> bool {
    for line in body.lines() {
        let line = line.split("//").next().unwrap_or_default();
        if line.contains("/*") {
            return false;
        }
        for statement in line.split(';') {
            let statement = statement.trim();
            if statement.is_empty() {
                continue;
            }
            let opcode = statement.split_whitespace().next().unwrap_or_default();
            match opcode {
                "griddepcontrol.wait" => return true,
                // Declarations of registers and memory, debug directives.
                ".reg" | ".shared" | ".local" | ".loc" | ".file" => {}
                "griddepcontrol.launch_dependents" => {}
                _ if opcode.starts_with("ld.param.")
                    || opcode.starts_with("mov.")
                    || opcode.starts_with("cvta.")
                    || opcode.starts_with("cvt.") => {}
                _ => return false,
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What nvcc 13.0 wrote for three kernels (`nvcc -O3 -arch=compute_90
    /// -ptx`), trimmed to their openings: one that waits first through
    /// the runtime's functions, one that reads `x[0]` before waiting, and
    /// one that never waits.
    const PTX: &str = r#"
.version 9.0
.target sm_90
.address_size 64

	// .globl	saxpy_rt
.visible .entry saxpy_rt(
	.param .u32 saxpy_rt_param_0,
	.param .f32 saxpy_rt_param_1,
	.param .u64 saxpy_rt_param_2,
	.param .u64 saxpy_rt_param_3
)
{
	.reg .pred 	%p<7>;
	.reg .f32 	%f<17>;
	.reg .b64 	%rd<68>;


	ld.param.s32 	%rd7, [saxpy_rt_param_0];
	ld.param.f32 	%f1, [saxpy_rt_param_1];
	ld.param.u64 	%rd36, [saxpy_rt_param_2];
	cvta.to.global.u64 	%rd1, %rd37;
	// begin inline asm
	griddepcontrol.launch_dependents;
	// end inline asm
	// begin inline asm
	griddepcontrol.wait;
	// end inline asm
	mov.u32 	%r1, %ctaid.x;
	ld.global.f32 	%f2, [%rd1];
	ret;

}
	// .globl	late
.visible .entry late(
	.param .u32 late_param_0,
	.param .u64 late_param_2
)
{
	.reg .b64 	%rd<57>;

	ld.param.u64 	%rd29, [late_param_2];
	cvta.to.global.u64 	%rd31, %rd29;
	ld.global.f32 	%f1, [%rd31];
	// begin inline asm
	griddepcontrol.wait;
	// end inline asm
	ret;

}
	// .globl	_Z5neverPf
.visible .entry _Z5neverPf(
	.param .u64 _Z5neverPf_param_0
)
{
	ld.param.u64 	%rd1, [_Z5neverPf_param_0];
	ret;

}
"#;

    #[test]
    fn reads_which_entries_wait_first() {
        assert_eq!(entries_that_wait_first(PTX), ["saxpy_rt"]);
        let kept = [
            ("compute_80".to_owned(), String::new()),
            ("compute_90".to_owned(), PTX.to_owned()),
        ];
        let waiting = waiting_by_architecture(&kept);
        assert_eq!(
            Forms::of("saxpy_rt", &waiting, &[80, 90], &[90]),
            Forms {
                machine_code: vec![(80, false), (90, true)],
                ptx: vec![(90, true)],
            }
        );
        // An architecture whose PTX was not kept is not proved.
        assert_eq!(
            Forms::of("saxpy_rt", &waiting, &[100], &[]).machine_code,
            [(100, false)]
        );
        assert!(!Forms::of("late", &waiting, &[90], &[90]).ptx[0].1);
    }

    #[test]
    fn anything_that_may_touch_memory_or_branch_first_is_not_proved() {
        let opening = |first: &str| format!("{{\n\t{first}\n\tgriddepcontrol.wait;\n}}");
        for before in [
            "ld.global.f32 %f1, [%rd1];",
            "ld.f32 %f1, [%rd1];",
            "st.global.f32 [%rd1], %f1;",
            "atom.global.add.u32 %r1, [%rd1], 1;",
            "@%p1 bra $L__BB0_2;",
            "$L__BB0_1:",
            "call.uni f, (%r1);",
            "{ .reg .pred p; }",
            "cp.async.ca.shared.global [%r1], [%rd1], 4;",
        ] {
            assert!(
                !waits_first(&opening(before)[1..]),
                "proved with `{before}` first"
            );
        }
        for harmless in [
            "ld.param.u64 %rd1, [k_param_0];",
            "mov.u32 %r1, %ctaid.x;",
            "cvta.to.global.u64 %rd2, %rd1;",
            "cvt.u64.u32 %rd3, %r1;",
            ".reg .b32 %r<4>;",
            "griddepcontrol.launch_dependents;",
            "// a comment",
        ] {
            assert!(
                waits_first(&opening(harmless)[1..]),
                "not proved with `{harmless}` first"
            );
        }
        // Inline assembly of several statements on a line is read whole;
        // a wait inside a block comment is no wait.
        for line in [
            "mov.u32 %r1, 0; ld.global.u32 %r1, [%rd1];",
            "mov.u32 %r1, %r1; /*",
            "mov.u32 %r1, %r1; st.global.u32 [%rd1], %r1; griddepcontrol.wait;",
        ] {
            assert!(
                !waits_first(&format!("\n\t{line}\n\tgriddepcontrol.wait;\n")),
                "proved after `{line}`"
            );
        }
        assert!(waits_first(
            "\n\t.loc 1 5 3\n\tmov.u32 %r1, 0; griddepcontrol.launch_dependents; griddepcontrol.wait;\n"
        ));
        assert!(!waits_first("\n\tret;\n"));
        assert!(entries_that_wait_first("").is_empty());
        // An entry cut short: nothing read, nothing proved.
        assert!(
            entries_that_wait_first(".entry k(\n.param .u32 a\n)\n{\n\tgriddepcontrol.wait;")
                .is_empty()
        );
    }
}
