// What every example does around its plan: find the GPU (or explain the
// plan when there is none), and check results against the CPU.

use memplan::{Context, Error};

/// GPU 0's context; without a GPU, prints the plan's summary and diagram,
/// says why there is no device, and returns `None`.
#[allow(dead_code)]
pub fn context_or_explain(summary: &str, diagram: &str) -> Result<Option<Context>, Error> {
    match Context::new(0) {
        Ok(context) => {
            println!("device: {}", context.device_name()?);
            Ok(Some(context))
        }
        Err(error) if error.is_no_device() => {
            println!("{summary}");
            println!("diagram (Mermaid):\n{diagram}");
            let why = Context::missing_gpu().unwrap_or_else(|| error.to_string());
            println!(
                "no CUDA device found ({why}): the plan was built and checked, and is not run"
            );
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// GPU 0's context for benchmark `name`; without a GPU, says it is
/// skipped and why, and returns `None`.
#[allow(dead_code)]
pub fn context_or_skip(name: &str) -> Result<Option<Context>, Error> {
    match Context::new(0) {
        Ok(context) => Ok(Some(context)),
        Err(error) if error.is_no_device() => {
            let why = Context::missing_gpu().unwrap_or_else(|| error.to_string());
            println!("{name}: skipped, {why}");
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// Fails with the first element that differs from what the CPU computes.
#[allow(dead_code)]
pub fn verify<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    expected: &[T],
) -> Result<(), String> {
    match got.iter().zip(expected).position(|(g, e)| g != e) {
        _ if got.len() != expected.len() => Err(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            expected.len()
        )),
        None => {
            println!("{what}: all {} elements match the CPU", got.len());
            Ok(())
        }
        Some(i) => Err(format!(
            "{what}: element {i} is {:?}, the CPU says {:?}",
            got[i], expected[i]
        )),
    }
}

/// [`verify`] against what `expected` says element `i` should be, for
/// results too large to hold twice.
#[allow(dead_code)]
pub fn verify_each<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    expected: impl Fn(usize) -> T,
) -> Result<(), String> {
    match got.iter().enumerate().position(|(i, g)| *g != expected(i)) {
        None => {
            println!("{what}: all {} elements match the CPU", got.len());
            Ok(())
        }
        Some(i) => Err(format!(
            "{what}: element {i} is {:?}, the CPU says {:?}",
            got[i],
            expected(i)
        )),
    }
}

/// The median wall time of `runs` runs, after one to warm up, in
/// milliseconds.
#[allow(dead_code)]
pub fn median_ms(
    runs: usize,
    mut run: impl FnMut() -> memplan::Result<memplan::RunReport>,
) -> memplan::Result<f64> {
    run()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(run()?.wall.as_secs_f64() * 1e3);
    }
    Ok(median(&mut times))
}

/// The median of `samples` (the upper one of an even count), NaN for none.
#[allow(dead_code)]
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Writes `timeline` as `<name>.svg` (a picture) and `<name>.trace.json`
/// (for ui.perfetto.dev) into `MEMPLAN_DEMO_DIR`, or `target/memplan-demo`
/// where that is unset, and says where.
#[allow(dead_code)]
pub fn save_timeline(name: &str, timeline: &memplan::Timeline) -> std::io::Result<()> {
    let dir = std::env::var_os("MEMPLAN_DEMO_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("target/memplan-demo"));
    std::fs::create_dir_all(&dir)?;
    let svg = dir.join(format!("{name}.svg"));
    let trace = dir.join(format!("{name}.trace.json"));
    std::fs::write(&svg, timeline.to_svg())?;
    std::fs::write(&trace, timeline.to_chrome_trace())?;
    println!(
        "timeline: {} and {} (open the trace in ui.perfetto.dev)",
        svg.display(),
        trace.display()
    );
    Ok(())
}
