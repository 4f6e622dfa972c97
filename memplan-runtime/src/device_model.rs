//! What a kind of GPU allows a kernel launch, known without one: the limits
//! NVIDIA documents for each compute capability, or a live GPU's own, read
//! from the driver. A plan's launches are checked against one: by `new`,
//! the GPU's own; by `check`, a model's, on a machine with no GPU.

use crate::context::Context;
use crate::error::{Fault, Location, Result, ResultExt};
use cust::sys::CUdevice_attribute;

/// The launch limits of a kind of GPU: what a plan's `check` holds its
/// launches to on a machine without one.
///
/// [`DeviceModel::named`] gives the limits NVIDIA documents for a compute
/// capability, from the CUDA C++ Programming Guide's "Technical
/// Specifications per Compute Capability" table: for every capability
/// listed, at most 1024 threads in a block, blocks of at most 1024 x 1024
/// x 64, grids of at most 2^31 - 1 x 65535 x 65535, and the most shared
/// memory a block can opt in to, which differs by capability.
/// [`DeviceModel::of`] reads the same limits of a live GPU from the driver:
/// the ones `new` checks against.
///
/// What a model cannot know is what depends on a kernel's compiled code:
/// how many threads a block of it can have (its registers may allow fewer
/// than 1024), and how much of a block's shared memory its static arrays
/// take. Those, and the device's memory, are checked by `new` alone.
///
/// ```
/// use memplan_runtime::DeviceModel;
///
/// let hopper = DeviceModel::named("sm_90")?;
/// assert_eq!(hopper.compute_capability(), (9, 0));
/// assert_eq!(hopper.max_grid_dims(), [2_147_483_647, 65_535, 65_535]);
/// assert_eq!(hopper.max_shared_memory_per_block(), 227 * 1024);
///
/// let error = DeviceModel::named("sm_91").unwrap_err();
/// assert!(error.to_string().contains("sm_75, sm_80"), "{error}");
/// # Ok::<(), memplan_runtime::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceModel {
    /// `sm_90`: the compute capability's, for a live GPU too.
    name: String,
    /// Whether the limits were read from a live GPU, whose errors say
    /// "this GPU" rather than naming the model.
    live: bool,
    compute_capability: (u32, u32),
    max_threads_per_block: u32,
    max_block_dims: [u32; 3],
    max_grid_dims: [u32; 3],
    max_shared_memory_per_block: u32,
}

/// A compute capability's row of the Programming Guide's table: its name,
/// (major, minor), and the most shared memory a block can opt in to, in
/// KiB (the table's "KB"). Listed: the capabilities nvcc 13 compiles for
/// whose rows were read from the Guide. Any other (sm_103, sm_110,
/// sm_121) is refused until its row is added, never guessed from a
/// neighbour's.
const CAPABILITIES: &[(&str, (u32, u32), u32)] = &[
    ("sm_75", (7, 5), 64),
    ("sm_80", (8, 0), 163),
    ("sm_86", (8, 6), 99),
    ("sm_87", (8, 7), 163),
    ("sm_89", (8, 9), 99),
    ("sm_90", (9, 0), 227),
    ("sm_100", (10, 0), 227),
    ("sm_120", (12, 0), 99),
];

/// The limits every listed capability shares.
const MAX_THREADS_PER_BLOCK: u32 = 1024;
const MAX_BLOCK_DIMS: [u32; 3] = [1024, 1024, 64];
const MAX_GRID_DIMS: [u32; 3] = [i32::MAX as u32, 65_535, 65_535];

impl DeviceModel {
    /// The documented limits of compute capability `name`: `sm_90` for
    /// Hopper (an H100 or H200), `sm_80` for an A100, and so on; an
    /// architecture-specific name (`sm_90a`, `sm_100f`) is its
    /// capability's. An error, listing the names known, for any other.
    #[track_caller]
    pub fn named(name: &str) -> Result<DeviceModel> {
        let at = Location::caller();
        let base = name
            .strip_suffix(['a', 'f'])
            .filter(|base| Self::known().any(|known| known == *base))
            .unwrap_or(name);
        let Some(&(name, capability, shared_kib)) =
            CAPABILITIES.iter().find(|(known, ..)| *known == base)
        else {
            let fault = Fault::UnknownDeviceModel {
                name: name.to_owned(),
            };
            return Err(fault).at("DeviceModel::named", at);
        };
        Ok(DeviceModel {
            name: name.to_owned(),
            live: false,
            compute_capability: capability,
            max_threads_per_block: MAX_THREADS_PER_BLOCK,
            max_block_dims: MAX_BLOCK_DIMS,
            max_grid_dims: MAX_GRID_DIMS,
            max_shared_memory_per_block: shared_kib * 1024,
        })
    }

    /// The names [`named`](Self::named) knows, oldest first.
    pub fn known() -> impl Iterator<Item = &'static str> {
        CAPABILITIES.iter().map(|(name, ..)| *name)
    }

    /// The limits of `context`'s GPU, as its driver reports them: what
    /// `new` checks a plan's launches against.
    #[track_caller]
    pub fn of(context: &Context) -> Result<DeviceModel> {
        use CUdevice_attribute::*;
        let at = Location::caller();
        let read = |attribute: CUdevice_attribute| -> Result<u32> {
            let value = context
                .attribute_raw(attribute)
                .at("cuDeviceGetAttribute", at)?;
            // The driver reports no limit below 0; a 0 refuses every launch.
            Ok(u32::try_from(value).unwrap_or(0))
        };
        let major = read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        Ok(DeviceModel {
            name: format!("sm_{major}{minor}"),
            live: true,
            compute_capability: (major, minor),
            max_threads_per_block: read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dims: [
                read(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                read(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                read(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dims: [
                read(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                read(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                read(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            max_shared_memory_per_block: read(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
        })
    }

    /// The compute capability's name, `sm_90` (a live GPU's too).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// (major, minor): (9, 0) for Hopper.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// The most threads a block can have, whatever its kernel.
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads_per_block
    }

    /// The most threads a block can have along x, y and z.
    pub fn max_block_dims(&self) -> [u32; 3] {
        self.max_block_dims
    }

    /// The most blocks a grid can have along x, y and z.
    pub fn max_grid_dims(&self) -> [u32; 3] {
        self.max_grid_dims
    }

    /// The most shared memory, in bytes, a block can have once its kernel
    /// opts in (static and dynamic together).
    pub fn max_shared_memory_per_block(&self) -> u32 {
        self.max_shared_memory_per_block
    }

    /// How errors name the GPU: "this GPU", or "an sm_90 GPU".
    pub(crate) fn described(&self) -> String {
        match self.live {
            true => "this GPU".to_owned(),
            false => format!("an {} GPU", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_capability_has_the_documented_limits() {
        let names: Vec<&str> = DeviceModel::known().collect();
        assert_eq!(
            names,
            [
                "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120"
            ]
        );
        for name in names {
            let model = DeviceModel::named(name).unwrap();
            assert_eq!(model.name(), name);
            assert_eq!(model.max_threads_per_block(), 1024);
            assert_eq!(model.max_block_dims(), [1024, 1024, 64]);
            assert_eq!(model.max_grid_dims(), [(1 << 31) - 1, 65535, 65535]);
            assert_eq!(model.described(), format!("an {name} GPU"));
        }
        let shared = |name| {
            DeviceModel::named(name)
                .unwrap()
                .max_shared_memory_per_block()
        };
        // The table's KB are KiB: the driver reports 232448 on an H100.
        assert_eq!(shared("sm_90"), 232_448);
        assert_eq!(shared("sm_80"), 166_912);
        assert_eq!(shared("sm_86"), 101_376);
        assert_eq!(shared("sm_75"), 65_536);
        assert_eq!(
            DeviceModel::named("sm_80").unwrap().compute_capability(),
            (8, 0)
        );
    }

    #[test]
    fn architecture_specific_names_are_their_capabilitys() {
        let hopper = DeviceModel::named("sm_90").unwrap();
        assert_eq!(DeviceModel::named("sm_90a").unwrap(), hopper);
        assert_eq!(
            DeviceModel::named("sm_100f").unwrap(),
            DeviceModel::named("sm_100").unwrap()
        );
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_known_ones() {
        for name in ["sm_91", "sm_91a", "90", "", "sm_a", "SM_90"] {
            let error = DeviceModel::named(name).unwrap_err();
            assert_eq!(error.operation(), "DeviceModel::named");
            assert_eq!(
                error.fault(),
                &Fault::UnknownDeviceModel {
                    name: name.to_owned()
                }
            );
            let text = error.to_string();
            assert!(text.contains(&format!("`{name}`")), "{text}");
            assert!(
                text.contains("sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100 and sm_120"),
                "{text}"
            );
        }
    }
}
