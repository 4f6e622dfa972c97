use memplan::prelude::*;

// After a name error the plan's type keeps its interface (`new`, `run`,
// `host`, `SUMMARY`), so the code that uses it adds no errors of its own:
// one mistake, one error.
memplan! {
    pub plan Scale(n: usize, factor: f32) {
        host   data: [f32; n] pinned;
        device d: [f32; n];
        stream work;
        on work {
            copy data -> d;
            copy d -> dat;
        }
    }
}

fn use_it(ctx: &Context) -> memplan::Result<()> {
    println!("{}", Scale::SUMMARY);
    let mut plan = Scale::new(ctx, 16, 2.0)?;
    plan.host_mut().data.fill(1.0);
    plan.run()?;
    let _first: f32 = plan.host().data[0];
    Ok(())
}

fn main() {
    let _ = use_it;
}
