//! A launch resolved: its configuration computed and checked against the
//! GPU, the values its extents name checked first, each buffer argument's
//! range checked against the extent its contract gives, and the argument
//! values laid out in the types the kernel's code takes.

use super::*;

impl Resolver<'_> {
    pub(super) fn launch(
        &mut self,
        index: usize,
        launch: &LaunchInfo<'static>,
        stream: Option<u16>,
        gpu: u16,
    ) -> Result<Step, Fault> {
        let gpus = self.devices.len();
        if stream.is_none() && gpus > 1 {
            return Err(Fault::Unsupported(
                "a launch outside stream blocks in a plan on several GPUs: launch in a stream block, whose stream names the GPU",
            ));
        }
        // An argument for each parameter the kernel's code takes, no more.
        if launch.args.len() != self.info.kernel_code(launch.kernel)?.params.len() {
            return Err(MALFORMED);
        }
        let on_gpu = usize::from(launch.kernel) * gpus + usize::from(gpu);
        let kernel = match self.against {
            Against::Gpus(kernels) => Some(kernels.get(on_gpu).or_malformed()?),
            Against::Models => None,
        };
        let device = self.devices.get(usize::from(gpu)).or_malformed()?;
        let peer = self.info.gpus.is_some_and(|gpus| gpus.peer.is_some());
        let config = LaunchConfig {
            grid: self.dims(index, launch.grid, Which::Grid)?,
            block: self.dims(index, launch.block, Which::Block)?,
            shared_bytes: match launch.shared {
                None => 0,
                Some(Shared::Size(size)) => to_u32(self.sizes.get(size)?, "shared memory bytes")?,
                Some(Shared::Given) => {
                    self.given
                        .shared
                        .iter()
                        .find(|given| usize::from(given.op) == index)
                        .or_malformed()?
                        .value
                }
            },
        };
        check_limits(device, kernel, &config)?;
        // The values extents name first: a cast that changed one is the
        // cause of any extent that then looks wrong.
        for (position, arg) in launch.args.iter().enumerate() {
            if let Arg::Bound(size, param) = *arg {
                let size = self.sizes.get(size)?;
                // An integer, by the parameter's type; anything else the
                // description got wrong.
                let value = self.value(index, position)?.integer.or_malformed()?;
                if i128::try_from(size) != Ok(value) {
                    return Err(Fault::ExtentArgument {
                        param,
                        value: i64::try_from(value).map_err(|_| MALFORMED)?,
                        size,
                    });
                }
            }
        }
        let written = self
            .info
            .kernels
            .get(usize::from(launch.kernel))
            .or_malformed()?
            .written;
        let empty = [config.grid.x, config.grid.y, config.grid.z].contains(&0);
        let mut arguments = match self.spare.take() {
            Some(old) => Arguments::reusing(old),
            None => Arguments::default(),
        };
        for (position, arg) in launch.args.iter().enumerate() {
            match arg {
                &(Arg::Buffer(place) | Arg::Extent(place, ..) | Arg::Measured(place, ..)) => {
                    let span = self.span(place, Side::Device)?;
                    // Peer access does not open a pool's memory to other GPUs.
                    let pooled = matches!(span.placed.home, Home::Scratch(_));
                    if span.gpu.is_some_and(|on| on != gpu) && (!peer || pooled) {
                        return Err(Fault::Unsupported(
                            "a kernel given another GPU's memory, in a plan without `peer`",
                        ));
                    }
                    let extent = match *arg {
                        Arg::Extent(_, extent, param) => Some((self.sizes.get(extent)?, param)),
                        Arg::Measured(_, extent, param) => {
                            Some((self.measure(index, launch, extent, param)?, param))
                        }
                        _ => None,
                    };
                    if let Some((extent, param)) = extent
                        && extent > span.elements
                    {
                        return Err(Fault::Extent {
                            param,
                            extent,
                            len: span.elements,
                        });
                    }
                    let writes = written.contains(&u16::try_from(position).map_err(|_| MALFORMED)?);
                    // The checks count an `&out` range as written: all of
                    // it, which only a launch that runs can make true. Of a
                    // measured extent they count the whole argument.
                    if writes {
                        let touched = extent.map_or(span.elements, |(extent, _)| extent);
                        let param = match *arg {
                            Arg::Extent(_, _, param) | Arg::Measured(_, _, param) => Some(param),
                            _ => None,
                        };
                        if empty && touched > 0 {
                            return Err(Fault::EmptyGridWrites {
                                param,
                                elements: touched,
                            });
                        }
                        if let Arg::Measured(_, _, param) = *arg
                            && touched != span.elements
                        {
                            return Err(Fault::MeasuredWriteShort {
                                param,
                                extent: touched,
                                len: span.elements,
                            });
                        }
                    }
                    arguments.pointer(match span.addr.base {
                        Base::Fixed(base) => Ok(base.wrapping_add(span.addr.offset)),
                        _ => Err(span.addr),
                    });
                }
                &Arg::Count(size, param) => {
                    let value = self.sizes.get(size)?;
                    let code = self.info.kernel_code(launch.kernel)?;
                    let int =
                        (code.params.get(position).or_malformed()?.integer()).ok_or_else(|| {
                            Fault::Launch(format!(
                                "`{param}` is given a size, and its type is not an integer"
                            ))
                        })?;
                    arguments.value(&integer(value, int, param)?);
                }
                Arg::Value | Arg::Bound(..) => {
                    let value = self.value(index, position)?;
                    // What was given is what the kernel's parameter takes:
                    // the description's layout, which `new` checked against
                    // the compiled kernel.
                    let code = self.info.kernel_code(launch.kernel)?;
                    let param = code.params.get(position).or_malformed()?;
                    let layout = param.layout();
                    if !param.takes(value.type_id)
                        || value.bytes.len() != layout.size
                        || value.align != layout.align
                    {
                        return Err(MALFORMED);
                    }
                    if value.align > MAX_ALIGN {
                        return Err(Fault::Launch(format!(
                            "argument {position} is aligned to {} bytes; kernel arguments are aligned to at most {MAX_ALIGN}",
                            value.align
                        )));
                    }
                    arguments.value_of_any_type(&value.bytes, value.initialized);
                }
            }
        }
        Ok(Step::Launch {
            launch: arguments.finish(u16::try_from(on_gpu).map_err(|_| MALFORMED)?, config),
            stream,
        })
    }

    /// An extent computed from the integer arguments of launch `index` as
    /// the kernel receives them, a negative one counting as 0.
    /// The extent of `param`, computed from the values launch `index`'s
    /// kernel receives. A negative one is refused: the kernel's C
    /// arithmetic on it (`w * h` of two negatives) may reach further than
    /// any reading of it that clamps.
    fn measure(
        &mut self,
        index: usize,
        launch: &LaunchInfo<'static>,
        extent: &Size,
        param: &'static str,
    ) -> Result<usize, Fault> {
        let named = |position: usize| {
            extent
                .1
                .iter()
                .any(|term| matches!(*term, Term::Input(input) if usize::from(input) == position))
        };
        let mut inputs: Vec<Option<usize>> = Vec::with_capacity(launch.args.len());
        for (position, arg) in launch.args.iter().enumerate() {
            if !named(position) {
                inputs.push(None);
                continue;
            }
            inputs.push(Some(match *arg {
                // A size the plan computes at each iteration: the value the
                // kernel receives, once it is checked to fit its type.
                Arg::Count(size, ..) => self.sizes.get(size)?,
                _ => {
                    let integer = self.value(index, position)?.integer.or_malformed()?;
                    usize::try_from(integer).map_err(|_| Fault::NegativeExtentValue {
                        param,
                        position,
                        value: i64::try_from(integer).unwrap_or(i64::MIN),
                    })?
                }
            }));
        }
        super::super::sizes::evaluate(extent.1, &inputs).map_err(|problem| Fault::Size {
            size: extent.0,
            problem,
        })
    }

    /// The value `new` gave for argument `position` of launch `index`.
    fn value(&self, index: usize, position: usize) -> Result<&Value, Fault> {
        let op = u16::try_from(index).map_err(|_| MALFORMED)?;
        let arg = u16::try_from(position).map_err(|_| MALFORMED)?;
        self.given.value_of(op, arg).or_malformed()
    }

    fn dims(&mut self, index: usize, dims: Dims, which: Which) -> Result<Dim3, Fault> {
        let what = match which {
            Which::Grid => "grid",
            Which::Block => "block",
        };
        match dims {
            Dims::Given => self
                .given
                .dims
                .iter()
                .find(|given| usize::from(given.op) == index && given.value.0 == which)
                .map(|given| given.value.1)
                .or_malformed(),
            Dims::Sizes(sizes) => {
                let mut values = [1u32; 3];
                if sizes.is_empty() || sizes.len() > 3 {
                    return Err(MALFORMED);
                }
                for ((value, &size), axis) in values.iter_mut().zip(sizes).zip(["x", "y", "z"]) {
                    let size = self.sizes.get(size)?;
                    // The name written out only for an error: a launch is
                    // resolved at every run that changes it.
                    *value = u32::try_from(size)
                        .or_else(|_| to_u32(size, &format!("the {what}'s {axis} dimension")))?;
                }
                Ok(Dim3 {
                    x: values[0],
                    y: values[1],
                    z: values[2],
                })
            }
        }
    }
}

/// A size as the kernel's integer parameter `param` of type `int`, in its
/// bytes; one that does not fit is an error, never truncated.
pub(crate) fn integer(value: usize, int: RustScalar, param: &str) -> Result<IntegerBytes, Fault> {
    fn bytes<T: TryFrom<usize>, const N: usize>(
        value: usize,
        to_bytes: fn(T) -> [u8; N],
    ) -> Option<IntegerBytes> {
        let value = to_bytes(T::try_from(value).ok()?);
        let mut bytes = [0; 8];
        bytes.get_mut(..N)?.copy_from_slice(&value);
        Some(IntegerBytes { bytes, len: N })
    }
    let encoded = match int {
        RustScalar::I8 => bytes(value, i8::to_ne_bytes),
        RustScalar::U8 => bytes(value, u8::to_ne_bytes),
        RustScalar::I16 => bytes(value, i16::to_ne_bytes),
        RustScalar::U16 => bytes(value, u16::to_ne_bytes),
        RustScalar::I32 => bytes(value, i32::to_ne_bytes),
        RustScalar::U32 => bytes(value, u32::to_ne_bytes),
        RustScalar::I64 => bytes(value, i64::to_ne_bytes),
        RustScalar::U64 => bytes(value, u64::to_ne_bytes),
        RustScalar::Isize => bytes(value, isize::to_ne_bytes),
        RustScalar::Usize => bytes(value, usize::to_ne_bytes),
        _ => None,
    };
    encoded.ok_or_else(|| {
        Fault::Launch(format!(
            "`{param}` would be {value}, which does not fit its type ({int:?})"
        ))
    })
}

/// An integer's bytes, at most 8, kept without allocating: a launch's
/// counts are written at every run that changes them.
pub(crate) struct IntegerBytes {
    bytes: [u8; 8],
    len: usize,
}

impl std::ops::Deref for IntegerBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::{RustScalar, integer};

    /// A size given to an integer parameter is written in the parameter's
    /// own width and signedness, and refused where it would not fit: a
    /// `short` never sees 40000 as -25536.
    #[test]
    fn counts_are_written_in_the_parameters_own_type() {
        assert_eq!(
            *integer(40000, RustScalar::U16, "n").unwrap(),
            40000u16.to_ne_bytes()
        );
        assert!(integer(40000, RustScalar::I16, "n").is_err());
        assert!(integer(32767, RustScalar::I16, "n").is_ok());
        assert!(integer(128, RustScalar::I8, "n").is_err());
        assert!(integer(1 << 31, RustScalar::I32, "n").is_err());
        assert_eq!(
            *integer(1 << 31, RustScalar::U32, "n").unwrap(),
            (1u32 << 31).to_ne_bytes()
        );
        assert_eq!(
            *integer(1 << 40, RustScalar::I64, "n").unwrap(),
            (1i64 << 40).to_ne_bytes()
        );
        assert_eq!(
            *integer(7, RustScalar::Usize, "n").unwrap(),
            7usize.to_ne_bytes()
        );
        assert!(integer(1, RustScalar::F32, "n").is_err());
    }
}
