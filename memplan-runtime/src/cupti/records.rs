//! The few fields memplan reads from CUPTI's activity records, at the
//! offsets CUPTI 13's `cupti_activity.h` gives them (checked against the
//! header with `offsetof`; the leading fields of these records have kept
//! their places since CUDA 11).

/// `CUpti_ActivityKind` values.
pub const KIND_MEMCPY: u32 = 1;
pub const KIND_MEMSET: u32 = 2;
pub const KIND_DRIVER: u32 = 4;
/// Calls of CUDA's runtime API, which NCCL makes for some work (a rank
/// alone copies or scales with `cudaMemcpyAsync` or `cudaLaunchKernel`).
pub const KIND_RUNTIME: u32 = 5;
pub const KIND_CONCURRENT_KERNEL: u32 = 10;
/// Copies between two GPUs' memories, which CUPTI
/// reports apart from other copies.
pub const KIND_MEMCPY2: u32 = 22;
pub const KIND_EXTERNAL_CORRELATION: u32 = 39;

/// `CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2`: the first two custom kinds
/// are PyTorch's, which may share the process.
pub const EXTERNAL_KIND: u32 = 5;

/// What one record says, as far as memplan cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A copy, fill or kernel: the API call it came from, the GPU it ran
    /// on (CUDA's device ordinal), and when, in CUPTI's nanoseconds.
    Ran {
        correlation: u32,
        device: u32,
        span: Span,
    },
    /// The API call `correlation` was made under memplan's id `external`.
    Called { correlation: u32, external: u64 },
}

/// Start and end on the device, in nanoseconds of CUPTI's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
}

impl Span {
    /// The span covering both (an API call that did two things).
    pub fn union(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// Where each kind keeps `start`, `end`, `deviceId` and `correlationId`.
struct Layout {
    start: usize,
    end: usize,
    device: usize,
    correlation: usize,
}

/// `CUpti_ActivityMemcpy6` and `CUpti_ActivityMemset4` share these.
const COPY: Layout = Layout {
    start: 16,
    end: 24,
    device: 32,
    correlation: 44,
};
/// `CUpti_ActivityMemcpyPtoP4`: device and context ids of both ends come
/// before its correlation id; `deviceId` is the GPU that ran the copy.
const PEER_COPY: Layout = Layout {
    start: 16,
    end: 24,
    device: 32,
    correlation: 60,
};
/// `CUpti_ActivityKernel10`.
const KERNEL: Layout = Layout {
    start: 16,
    end: 24,
    device: 40,
    correlation: 92,
};
/// `CUpti_ActivityExternalCorrelation`: kind, external kind, id, correlation.
const EXTERNAL_ID: usize = 8;
const EXTERNAL_CORRELATION: usize = 16;

/// The bytes a record of `kind` must have for [`parse`] to read it.
pub fn needed_len(kind: u32) -> usize {
    match kind {
        KIND_CONCURRENT_KERNEL => KERNEL.correlation + 4,
        KIND_MEMCPY | KIND_MEMSET => COPY.correlation + 4,
        KIND_MEMCPY2 => PEER_COPY.correlation + 4,
        KIND_EXTERNAL_CORRELATION => EXTERNAL_CORRELATION + 4,
        _ => 4,
    }
}

/// What `record` (its bytes from the start, at least [`needed_len`] of its
/// kind) says; `None` for kinds memplan does not read, for other tools'
/// external ids, and for records without times.
pub fn parse(record: &[u8]) -> Option<Record> {
    let kind = u32_at(record, 0)?;
    let layout = match kind {
        KIND_MEMCPY | KIND_MEMSET => COPY,
        KIND_MEMCPY2 => PEER_COPY,
        KIND_CONCURRENT_KERNEL => KERNEL,
        KIND_EXTERNAL_CORRELATION => {
            return (u32_at(record, 4)? == EXTERNAL_KIND).then_some(Record::Called {
                correlation: u32_at(record, EXTERNAL_CORRELATION)?,
                external: u64_at(record, EXTERNAL_ID)?,
            });
        }
        _ => return None,
    };
    let span = Span {
        start: u64_at(record, layout.start)?,
        end: u64_at(record, layout.end)?,
    };
    // CUPTI leaves 0 where it has no timestamp (work that never ran).
    (span.start > 0 && span.end >= span.start).then_some(Record::Ran {
        correlation: u32_at(record, layout.correlation)?,
        device: u32_at(record, layout.device)?,
        span,
    })
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(len: usize, fields: &[(usize, &[u8])]) -> Vec<u8> {
        let mut bytes = vec![0; len];
        for (at, value) in fields {
            bytes[*at..*at + value.len()].copy_from_slice(value);
        }
        bytes
    }

    #[test]
    fn a_copy_gives_its_correlation_and_times() {
        let copy = record(
            96,
            &[
                (0, &KIND_MEMCPY.to_ne_bytes()),
                (8, &4096u64.to_ne_bytes()),
                (16, &1_000u64.to_ne_bytes()),
                (24, &3_000u64.to_ne_bytes()),
                (32, &3u32.to_ne_bytes()),
                (44, &77u32.to_ne_bytes()),
            ],
        );
        assert_eq!(
            parse(&copy),
            Some(Record::Ran {
                correlation: 77,
                device: 3,
                span: Span {
                    start: 1_000,
                    end: 3_000
                }
            })
        );
    }

    #[test]
    fn a_copy_between_gpus_keeps_its_correlation_after_both_ends() {
        let copy = record(
            96,
            &[
                (0, &KIND_MEMCPY2.to_ne_bytes()),
                (16, &10u64.to_ne_bytes()),
                (24, &20u64.to_ne_bytes()),
                (32, &1u32.to_ne_bytes()), // the device that ran it
                (44, &1u32.to_ne_bytes()), // the source's device
                (52, &0u32.to_ne_bytes()), // the destination's
                (60, &31u32.to_ne_bytes()),
            ],
        );
        assert_eq!(
            parse(&copy),
            Some(Record::Ran {
                correlation: 31,
                device: 1,
                span: Span { start: 10, end: 20 }
            })
        );
    }

    #[test]
    fn a_kernel_keeps_its_correlation_further_on() {
        let kernel = record(
            216,
            &[
                (0, &KIND_CONCURRENT_KERNEL.to_ne_bytes()),
                (16, &5u64.to_ne_bytes()),
                (24, &9u64.to_ne_bytes()),
                (40, &2u32.to_ne_bytes()),
                (44, &1u32.to_ne_bytes()), // the context's id
                (92, &12u32.to_ne_bytes()),
            ],
        );
        assert!(matches!(
            parse(&kernel),
            Some(Record::Ran {
                correlation: 12,
                device: 2,
                ..
            })
        ));
    }

    #[test]
    fn only_memplans_external_ids_count() {
        let ours = record(
            24,
            &[
                (0, &KIND_EXTERNAL_CORRELATION.to_ne_bytes()),
                (4, &EXTERNAL_KIND.to_ne_bytes()),
                (8, &(1u64 << 40).to_ne_bytes()),
                (16, &3u32.to_ne_bytes()),
            ],
        );
        assert_eq!(
            parse(&ours),
            Some(Record::Called {
                correlation: 3,
                external: 1 << 40
            })
        );
        let theirs = record(
            24,
            &[
                (0, &KIND_EXTERNAL_CORRELATION.to_ne_bytes()),
                (4, &3u32.to_ne_bytes()),
            ],
        );
        assert_eq!(parse(&theirs), None);
    }

    #[test]
    fn short_untimed_and_unknown_records_say_nothing() {
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&record(20, &[(0, &KIND_MEMCPY.to_ne_bytes())])), None);
        let untimed = record(96, &[(0, &KIND_MEMSET.to_ne_bytes())]);
        assert_eq!(parse(&untimed), None);
        for api in [KIND_DRIVER, KIND_RUNTIME] {
            assert_eq!(parse(&record(64, &[(0, &api.to_ne_bytes())])), None);
        }
        for kind in [
            KIND_MEMCPY,
            KIND_MEMCPY2,
            KIND_MEMSET,
            KIND_CONCURRENT_KERNEL,
            KIND_EXTERNAL_CORRELATION,
        ] {
            assert!(needed_len(kind) <= 96 && needed_len(kind) > 4);
        }
    }
}
