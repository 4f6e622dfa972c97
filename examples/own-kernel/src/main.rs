//! A batch of images through a box blur of our own (`src/blur.cu`),
//! checked against the same blur on the CPU.
//!
//! The kernel's declaration is checked against the C++ while this program
//! compiles (names, pointer or value, element types, widths) and against
//! the contract `blur.cu` states next to each pointer (`MEMPLAN_READS`,
//! `MEMPLAN_WRITES` and how many elements): the extents restated here are
//! the ones the source states, and `new` refuses a launch whose buffers
//! are shorter.

use memplan::memplan;

// `pub static BLUR: memplan::Image`, with the kernel's signature.
memplan::include_kernels!();

// The plan checked against a model of a GPU, which needs none.
#[cfg(test)]
mod model_check;

memplan! {
    /// Blurs `count` images of `width` x `height` pixels.
    pub plan Blur(
        width: usize,
        height: usize,
        count: usize,
        images: &[f32; width * height * count] registered,
        blurred: &mut [f32; width * height * count] registered,
    ) {
        kernel box_blur(
            input: &[f32; width * height * count],
            output: &out [f32; width * height * count],
            width: i32,
            height: i32,
            count: i32,
        ) from BLUR;
        device on_gpu: [f32; width * height * count], result: [f32; width * height * count];
        stream s;
        on s {
            copy images -> on_gpu;
            launch box_blur<<<blocks(width * height * count, 256), 256>>>(
                on_gpu, result, width as i32, height as i32, count as i32
            );
            copy result -> blurred;
        }
    }
}

const WIDTH: usize = 640;
const HEIGHT: usize = 480;
const COUNT: usize = 32;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let images = test_images(WIDTH, HEIGHT, COUNT);
    let ctx = match memplan::Context::new(0) {
        Ok(ctx) => ctx,
        Err(error) if error.is_no_device() => {
            println!("{}", Blur::SUMMARY);
            // Without a GPU, the sizes and values are checked against a
            // model of one: what `new` would check that needs no GPU.
            let hopper = memplan::DeviceModel::named("sm_90")?;
            Blur::check(&hopper, WIDTH, HEIGHT, COUNT)?;
            println!(
                "no CUDA device ({error}): the plan compiled and its sizes passed the checks of an sm_90 GPU's limits; it is not run"
            );
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    println!("device: {}", ctx.device_name()?);

    let mut plan = Blur::new(&ctx, WIDTH, HEIGHT, COUNT)?;
    let mut blurred = vec![0.0f32; images.len()];
    plan.set_timing(true)?;
    let report = plan.run(&images, &mut blurred)?;
    print!("{report}");

    let expected = blur_on_cpu(&images, WIDTH, HEIGHT);
    // The GPU adds the nine values in the same order, so the sums agree to
    // the last bit unless it contracts them differently: allow a few ulps.
    let worst = blurred
        .iter()
        .zip(&expected)
        .map(|(gpu, cpu)| (gpu - cpu).abs() / cpu.abs().max(1.0))
        .fold(0.0f32, f32::max);
    if worst > 1e-5 {
        return Err(format!("the GPU's blur differs from the CPU's by {worst:e}").into());
    }
    println!(
        "box blur: {COUNT} images of {WIDTH}x{HEIGHT}, all {} pixels match the CPU (largest relative difference {worst:e})",
        blurred.len()
    );
    Ok(())
}

/// Images with edges and gradients, different from each other.
fn test_images(width: usize, height: usize, count: usize) -> Vec<f32> {
    (0..count * width * height)
        .map(|i| {
            let (image, pixel) = (i / (width * height), i % (width * height));
            let (x, y) = (pixel % width, pixel / width);
            let checker = ((x / 16 + y / 16 + image) % 2) as f32;
            checker * 200.0 + (x as f32 * 0.25) + (y as f32 * 0.125) + image as f32
        })
        .collect()
}

/// The same blur as `blur.cu`, in the same order of additions.
fn blur_on_cpu(images: &[f32], width: usize, height: usize) -> Vec<f32> {
    let pixels = width * height;
    let mut out = vec![0.0f32; images.len()];
    for (i, value) in out.iter_mut().enumerate() {
        let image = &images[(i / pixels) * pixels..][..pixels];
        let (x, y) = ((i % pixels) % width, (i % pixels) / width);
        let mut sum = 0.0f32;
        for dy in -1i64..=1 {
            let row = (y as i64 + dy).clamp(0, height as i64 - 1) as usize;
            for dx in -1i64..=1 {
                let column = (x as i64 + dx).clamp(0, width as i64 - 1) as usize;
                sum += image[row * width + column];
            }
        }
        *value = sum / 9.0;
    }
    out
}
