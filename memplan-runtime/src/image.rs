//! Module images: the compiled GPU code a [`Module`](crate::Module) loads.
//!
//! `cuModuleLoadData` takes a pointer and no length, and follows the
//! image's own headers and tables wherever they point: an image whose
//! entries claim more than it holds makes the driver read past its end. A
//! fatbin's entries (compressed ELF and PTX) cannot all be checked here, so
//! safe code loads only an [`Image`], which a build step that ran nvcc made
//! (`memplan_kernels`, and `memplan-build` for your own kernels); bytes of
//! any other origin load through the `unsafe` [`Module::from_bytes`].
//!
//! [`Module::from_bytes`]: crate::Module::from_bytes

use crate::error::Fault;
use memplan_model::KernelSignature;

/// Compiled GPU code embedded in the program, what a
/// [`Module`](crate::Module) loads: a fatbin or cubin that a build step
/// made, or PTX text.
///
/// Fatbins come only from build steps: the constructors that take bytes
/// are `unsafe` (the bytes are trusted as far as the driver reads them), so
/// safe code cannot hand the driver a malformed image. `memplan-build`
/// makes them with each kernel's C++ signature, which plans check their
/// `kernel` declarations against; an image without signatures (bytes of
/// any other origin, PTX from another tool) can only be declared `unsafe
/// kernel`.
///
/// ```
/// let image: &memplan_runtime::Image = &memplan_kernels::VECTOR_ADD;
/// assert_eq!(&image.bytes()[..4], &0xBA55ED50u32.to_le_bytes());
/// assert!(image.kernels().unwrap().iter().any(|kernel| kernel.name == "vadd"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Image {
    bytes: &'static [u8],
    format: Format,
    kernels: Option<&'static [KernelSignature]>,
}

/// What an image's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// A fatbin or a cubin.
    Binary,
    /// PTX text, compiled for the GPU when loaded.
    Ptx,
    /// Nothing: a build without nvcc (documentation builds, or one that
    /// opted out), which says so when loaded.
    Unbuilt,
}

impl Image {
    /// An image of `bytes`, whose kernels are unknown.
    ///
    /// # Safety
    /// `bytes` is a complete fatbin or cubin written by nvcc (or read back
    /// unchanged from one), aligned to 8 bytes: the driver follows every
    /// offset and length inside it.
    pub const unsafe fn from_static(bytes: &'static [u8]) -> Image {
        Image {
            bytes,
            format: Format::Binary,
            kernels: None,
        }
    }

    /// An image of `bytes` whose kernels are `kernels`: what the code
    /// `memplan-build` generates makes.
    ///
    /// # Safety
    /// As for [`from_static`](Self::from_static), and `kernels` lists the
    /// image's `__global__` functions with their parameters as compiled:
    /// plans trust it to pass each kernel arguments it can read. Each
    /// form its `waits_first` marks as waiting does wait for the work
    /// before it (`griddepcontrol.wait`) before it touches memory: such a
    /// kernel is launched while that work may still run.
    pub const unsafe fn from_build(
        bytes: &'static [u8],
        kernels: &'static [KernelSignature],
    ) -> Image {
        Image {
            bytes,
            format: Format::Binary,
            kernels: Some(kernels),
        }
    }

    /// PTX text, from nvcc or any other tool: the driver compiles it when
    /// the module loads, and reports malformed text as an error. Its
    /// kernels are unknown, so plans declare them `unsafe kernel`.
    pub const fn from_ptx(ptx: &'static str) -> Image {
        Image {
            bytes: ptx.as_bytes(),
            format: Format::Ptx,
            kernels: None,
        }
    }

    /// A stand-in for an image that a build without nvcc could not make
    /// (for documentation builds, or with `MEMPLAN_NO_NVCC`): plans that
    /// use it compile, and loading it fails with an error that says why.
    pub const fn unbuilt(kernels: &'static [KernelSignature]) -> Image {
        Image {
            bytes: &[],
            format: Format::Unbuilt,
            kernels: Some(kernels),
        }
    }

    /// The image's bytes.
    pub const fn bytes(&self) -> &'static [u8] {
        self.bytes
    }

    /// The image's kernels with their C++ signatures, when a build step
    /// that read them made the image.
    pub const fn kernels(&self) -> Option<&'static [KernelSignature]> {
        self.kernels
    }

    /// Whether the image is a stand-in from a build without nvcc, whose
    /// signatures are not known (declarations are not checked against it).
    pub const fn is_unbuilt(&self) -> bool {
        matches!(self.format, Format::Unbuilt)
    }

    pub(crate) fn format(&self) -> Format {
        self.format
    }
}

/// Bytes aligned to 16, as the driver reads a fatbin's header in 8-byte
/// words and `include_bytes!` alone promises 1-byte alignment. The code
/// `memplan-build` generates embeds each fatbin in one:
///
/// ```
/// use memplan_runtime::Aligned;
/// static BYTES: Aligned<[u8; 4]> = Aligned([1, 2, 3, 4]);
/// assert_eq!(BYTES.0.as_ptr().align_offset(16), 0);
/// ```
#[repr(C, align(16))]
pub struct Aligned<T: ?Sized>(pub T);

/// The alignment the driver reads a fatbin's header with.
pub(crate) const ALIGNMENT: usize = 8;

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const ELF_MAGIC: &[u8] = b"\x7fELF";

/// `Ok` if `image` is a fatbin or a 64-bit ELF cubin whose headers, tables
/// and sections all lie inside it.
pub fn check_image(image: &[u8]) -> Result<(), Fault> {
    let reader = Reader(image);
    if reader.u32(0) == Some(FATBIN_MAGIC) {
        // magic u32, version u16, header size u16, size of what follows u64.
        let header = u64::from(reader.u16(6).ok_or(TRUNCATED)?);
        let body = reader.u64(8).ok_or(TRUNCATED)?;
        return reader.holds(header, body);
    }
    if image.starts_with(ELF_MAGIC) {
        return check_elf(&reader);
    }
    Err(Fault::Unsupported(
        "not a fatbin or a cubin (PTX text goes to Module::from_ptx)",
    ))
}

const TRUNCATED: Fault = Fault::Unsupported("the image is shorter than its headers say");

fn check_elf(elf: &Reader) -> Result<(), Fault> {
    const ELF64: u8 = 2;
    const NOBITS: u32 = 8;
    if elf.0.get(4) != Some(&ELF64) {
        return Err(Fault::Unsupported("a cubin is a 64-bit ELF file"));
    }
    elf.holds(0, 64)?;
    let tables = [
        // (offset, entry size, count) of the program and section headers.
        (elf.u64(0x20), elf.u16(0x36), elf.u16(0x38)),
        (elf.u64(0x28), elf.u16(0x3A), elf.u16(0x3C)),
    ];
    for (offset, entry, count) in tables {
        let (offset, entry, count) = (
            offset.ok_or(TRUNCATED)?,
            entry.ok_or(TRUNCATED)?,
            count.ok_or(TRUNCATED)?,
        );
        let table = u64::from(entry)
            .checked_mul(u64::from(count))
            .ok_or(TRUNCATED)?;
        elf.holds(offset, table)?;
    }
    // What the program headers and sections point to lies inside too.
    // The record `index` of the table at `table`, of `entry` bytes each.
    let record = |table: Option<u64>, entry: Option<u16>, index: u64| {
        let step = index.checked_mul(u64::from(entry.ok_or(TRUNCATED)?));
        step.and_then(|step| table?.checked_add(step))
            .ok_or(TRUNCATED)
    };
    let (program, program_entry, programs) = (elf.u64(0x20), elf.u16(0x36), elf.u16(0x38));
    for index in 0..u64::from(programs.unwrap_or(0)) {
        let base = record(program, program_entry, index)?;
        elf.holds(elf.at(base, 0x08)?, elf.at(base, 0x20)?)?;
    }
    let (sections, section_entry, count) = (elf.u64(0x28), elf.u16(0x3A), elf.u16(0x3C));
    for index in 0..u64::from(count.unwrap_or(0)) {
        let base = record(sections, section_entry, index)?;
        let kind_at = base.checked_add(4).and_then(|at| usize::try_from(at).ok());
        let kind = elf.u32(kind_at.ok_or(TRUNCATED)?).ok_or(TRUNCATED)?;
        if kind != NOBITS {
            elf.holds(elf.at(base, 0x18)?, elf.at(base, 0x20)?)?;
        }
    }
    Ok(())
}

/// Little-endian fields of a byte slice, `None` past its end.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes<const N: usize>(&self, offset: usize) -> Option<[u8; N]> {
        self.0.get(offset..offset.checked_add(N)?)?.try_into().ok()
    }

    fn u16(&self, offset: usize) -> Option<u16> {
        self.bytes(offset).map(u16::from_le_bytes)
    }

    fn u32(&self, offset: usize) -> Option<u32> {
        self.bytes(offset).map(u32::from_le_bytes)
    }

    fn u64(&self, offset: usize) -> Option<u64> {
        self.bytes(offset).map(u64::from_le_bytes)
    }

    /// The u64 field at `field` of the record at `base`.
    fn at(&self, base: u64, field: u64) -> Result<u64, Fault> {
        let offset =
            usize::try_from(base.checked_add(field).ok_or(TRUNCATED)?).map_err(|_| TRUNCATED)?;
        self.u64(offset).ok_or(TRUNCATED)
    }

    /// `Ok` if `len` bytes from `offset` lie inside the slice.
    fn holds(&self, offset: u64, len: u64) -> Result<(), Fault> {
        match offset.checked_add(len) {
            Some(end) if end <= self.0.len() as u64 => Ok(()),
            _ => Err(TRUNCATED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fatbin(body: u64, actual_body: usize) -> Vec<u8> {
        let mut image = FATBIN_MAGIC.to_le_bytes().to_vec();
        image.extend(1u16.to_le_bytes());
        image.extend(16u16.to_le_bytes());
        image.extend(body.to_le_bytes());
        image.extend(vec![0; actual_body]);
        image
    }

    #[test]
    fn accepts_a_fatbin_that_holds_what_its_header_says() {
        assert_eq!(check_image(&fatbin(32, 32)), Ok(()));
    }

    #[test]
    fn refuses_truncated_and_foreign_images() {
        assert_eq!(check_image(&fatbin(32, 31)), Err(TRUNCATED));
        assert_eq!(check_image(&fatbin(u64::MAX, 0)), Err(TRUNCATED));
        assert_eq!(check_image(&FATBIN_MAGIC.to_le_bytes()), Err(TRUNCATED));
        assert!(check_image(&[]).is_err());
        assert!(
            check_image(b".version 9.0").is_err(),
            "PTX text is not an image"
        );
        assert!(
            check_image(b"\x7fELF\x02").is_err(),
            "an ELF header cut short"
        );
    }

    #[test]
    fn tables_past_the_address_space_are_refused_without_a_panic() {
        let mut elf = vec![0u8; 64];
        elf[..5].copy_from_slice(b"\x7fELF\x02");
        // Section table at u64::MAX - 8, 64-byte entries, 2 of them.
        elf[0x28..0x30].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
        elf[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3C..0x3E].copy_from_slice(&2u16.to_le_bytes());
        assert_eq!(check_image(&elf), Err(TRUNCATED));
    }

    #[test]
    fn accepts_the_fatbins_the_kernels_crate_embeds() {
        for (name, image) in memplan_kernels::ALL_MODULES {
            assert_eq!(check_image(image.bytes()), Ok(()), "{name}");
            assert_eq!(image.bytes().as_ptr().align_offset(ALIGNMENT), 0, "{name}");
        }
    }
}
