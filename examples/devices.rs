// Lists the CUDA devices this machine has, or says why there are none.

use cust::device::{Device, DeviceAttribute};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if cust::init(cust::CudaFlags::empty()).is_err() {
        let why =
            memplan::Context::missing_gpu().unwrap_or_else(|| "the driver did not start".into());
        println!("no CUDA device: {why}");
        return Ok(());
    }
    let devices: Vec<Device> = Device::devices()?.collect::<Result<_, _>>()?;
    if devices.is_empty() {
        println!("no CUDA device: the driver reports none");
    }
    for (ordinal, device) in devices.iter().enumerate() {
        let major = device.get_attribute(DeviceAttribute::ComputeCapabilityMajor)?;
        let minor = device.get_attribute(DeviceAttribute::ComputeCapabilityMinor)?;
        let memory_gib = device.total_memory()? as f64 / (1u64 << 30) as f64;
        println!(
            "device {ordinal}: {} (sm_{major}{minor}, {memory_gib:.1} GiB)",
            device.name()?
        );
    }
    Ok(())
}
