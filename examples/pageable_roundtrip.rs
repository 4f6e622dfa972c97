// Ordinary (pageable) host memory and synchronous copies, there and back:
// the squares of 1 to 10. Operations outside stream blocks are synchronous,
// one after the other; pageable memory is what every `Vec` is, and the
// driver copies it through a staging buffer.

#[path = "common/mod.rs"]
mod common;

use memplan::prelude::*;

memplan! {
    /// Squares `n` integers on the GPU with pageable memory and synchronous
    /// copies: the simplest plan there is.
    pub plan Squares(n: usize) {
        kernel square(input: &[i32; n], output: &out [i32; n], n: i32) from memplan_kernels::SQUARE;

        host   numbers: [i32; n] pageable, squares: [i32; n] pageable;
        device input: [i32; n], output: [i32; n];

        copy numbers -> input;
        launch square<<<blocks(n, 256), 256>>>(input, output, n as i32);
        copy output -> squares;
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::context_or_explain(Squares::SUMMARY, Squares::DIAGRAM)? else {
        return Ok(());
    };
    let numbers: Vec<i32> = (1..=10).collect();
    let mut plan = Squares::new(&ctx, numbers.len())?;
    plan.host_mut().numbers.copy_from_slice(&numbers);
    plan.set_timing(true)?;

    let report = plan.run()?;

    let expected: Vec<i32> = numbers.iter().map(|x| x * x).collect();
    common::verify("squares", plan.host().squares, &expected)?;
    println!("squares of 1..=10: {:?}", plan.host().squares);
    print!("{report}");
    common::save_timeline("pageable_roundtrip", &Timeline::from(report))?;
    Ok(())
}
