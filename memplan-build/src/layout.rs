//! The layouts of the classes kernels take (`float4 *`, `struct Window`),
//! measured by nvcc.
//!
//! A Rust type stands for a C++ class only through an `unsafe`
//! `KernelValue` impl that names it; the size and alignment measured here
//! are checked against that type's while the plan compiles, so a type of
//! another size is refused whatever its impl says. The measuring is a
//! second small compile: the source, then an array per class holding
//! `sizeof` and `alignof`, compiled to PTX, where nvcc writes each array's
//! initial bytes as numbers.

use crate::demangle::{CType, Function};
use crate::spelling;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// A class's size and alignment, in bytes, as the device compiler lays it
/// out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub size: u64,
    pub align: u64,
}

/// What was measured, by the class's qualified name.
pub type Layouts = BTreeMap<String, Layout>;

/// The classes `functions` take by value or point to, which C++ can name
/// from the file's scope, without repeats, sorted.
pub fn classes<'a>(functions: impl IntoIterator<Item = &'a Function>) -> Vec<String> {
    let mut names: Vec<String> = functions
        .into_iter()
        .flat_map(|function| &function.params)
        .filter_map(|param| {
            let param = unqualified(param);
            match param {
                CType::Pointer(pointee) => match unqualified(pointee) {
                    CType::Named(name) => Some(name.clone()),
                    _ => None,
                },
                CType::Named(name) => Some(name.clone()),
                _ => None,
            }
        })
        // A lambda, an anonymous namespace's class (which `::S` from the
        // top could miss for another `S`): nothing to name.
        .filter(|name| !name.contains('{') && !name.contains("_GLOBAL__N_"))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn unqualified(ty: &CType) -> &CType {
    match ty {
        CType::Qualified { inner, .. } => inner,
        other => other,
    }
}

/// The array of `class` number `index` in the measuring source.
fn array(index: usize) -> String {
    format!("__memplan_layout_{index}")
}

/// A source that includes `source` and measures `classes`: an incomplete
/// one (declared, never defined) measures 0, which is not a layout. As
/// [`crate::probe`]'s, it defines its own before the include and checks
/// that what it writes after is no macro of the source's
/// ([`spelling::unexpanded`]).
pub fn measuring_source(source: &Path, classes: &[String]) -> String {
    let mut text = format!(
        "// Written by memplan-build: the layouts of the classes the kernels of\n\
         // {0} take.\n\
         typedef unsigned long long __memplan_u64;\n\
         template <class T, class = void> struct __memplan_layout {{\n    \
         static constexpr __memplan_u64 size = 0, align = 0;\n}};\n\
         template <class T> struct __memplan_layout<T, decltype(void(sizeof(T)))> {{\n    \
         static constexpr __memplan_u64 size = sizeof(T), align = alignof(T);\n}};\n\
         #include \"{0}\"\n",
        source.display()
    );
    let arrays: Vec<String> = (0..classes.len()).map(array).collect();
    let written = ["__memplan_u64", "__memplan_layout", "size", "align"];
    text.push_str(&spelling::unexpanded(
        written
            .iter()
            .copied()
            .chain(arrays.iter().chain(classes).map(String::as_str)),
    ));
    for (index, class) in classes.iter().enumerate() {
        writeln!(
            text,
            "__device__ __memplan_u64 {}[2] = {{ __memplan_layout<::{class}>::size, \
             __memplan_layout<::{class}>::align }};",
            array(index)
        )
        .unwrap();
    }
    text
}

/// The layouts the PTX of a measuring source holds, by class; an
/// incomplete class has none.
pub fn read_ptx(ptx: &str, classes: &[String]) -> Result<Layouts, String> {
    let mut layouts = Layouts::new();
    for (index, class) in classes.iter().enumerate() {
        let name = format!("{}[", array(index));
        let line = ptx
            .lines()
            .find(|line| line.contains(&name))
            .ok_or_else(|| format!("nvcc's PTX has no measure of `{class}`"))?;
        let values = initial_values(line)
            .ok_or_else(|| format!("cannot read the measure of `{class}` in `{line}`"))?;
        let [size, align] = values;
        if size == 0 {
            continue;
        }
        if !align.is_power_of_two() {
            return Err(format!(
                "`{class}` measured {size} bytes aligned to {align}"
            ));
        }
        layouts.insert(class.clone(), Layout { size, align });
    }
    Ok(layouts)
}

/// The two `u64`s of a PTX array definition: `... .b8 name[16] = {16, 0,
/// ..., 16};` (little-endian bytes, trailing zeros left out), `... .u64
/// name[2] = {16, 16};`, or zeros, which nvcc writes without `=`.
fn initial_values(line: &str) -> Option<[u64; 2]> {
    if !line.contains('=') {
        return line.trim_end().ends_with("];").then_some([0, 0]);
    }
    let list = line.split_once('{')?.1.split_once('}')?.0;
    let numbers: Vec<u64> = list
        .split(',')
        .map(|n| n.trim().parse())
        .collect::<Result<_, _>>()
        .ok()?;
    if line.contains(".u64") {
        let mut values = [0; 2];
        for (value, number) in values.iter_mut().zip(&numbers) {
            *value = *number;
        }
        return (numbers.len() <= 2).then_some(values);
    }
    if !line.contains(".b8") || numbers.len() > 16 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (byte, number) in bytes.iter_mut().zip(&numbers) {
        *byte = u8::try_from(*number).ok()?;
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    Some([word(0), word(8)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demangle::demangle;

    #[test]
    fn classes_are_the_named_pointees_and_values() {
        let lay = demangle("_Z3layP6float4PyK6WindowN2ns4PairEm").unwrap();
        let vadd = demangle("_Z4vaddPKfS0_Pfi").unwrap();
        assert_eq!(classes([&lay, &vadd]), ["Window", "float4", "ns::Pair"]);
    }

    #[test]
    fn the_measuring_source_names_each_class_from_the_top() {
        let source = measuring_source(Path::new("/k/lay.cu"), &["ns::Pair".to_owned()]);
        let include = source.find("#include \"/k/lay.cu\"").unwrap();
        assert!(source.find("sizeof(T)").unwrap() < include);
        assert!(source.contains("#ifdef Pair\n"));
        assert!(source.contains(
            "__memplan_layout_0[2] = { __memplan_layout<::ns::Pair>::size, \
             __memplan_layout<::ns::Pair>::align };"
        ));
    }

    #[test]
    fn reads_nvccs_arrays() {
        // As nvcc 13.0 writes them.
        let ptx = ".global .align 8 .b8 __memplan_layout_0[16] = {16, 0, 0, 0, 0, 0, 0, 0, 16};\n\
                   .global .align 8 .b8 __memplan_layout_1[16] = {0, 16, 0, 0, 0, 0, 0, 0, 4};\n\
                   .global .align 8 .u64 __memplan_layout_2[2] = {12, 4};\n";
        let classes = ["float4".to_owned(), "Big".to_owned(), "Window".to_owned()];
        let layouts = read_ptx(ptx, &classes).unwrap();
        assert_eq!(
            layouts["float4"],
            Layout {
                size: 16,
                align: 16
            }
        );
        assert_eq!(
            layouts["Big"],
            Layout {
                size: 4096,
                align: 4
            }
        );
        assert_eq!(layouts["Window"], Layout { size: 12, align: 4 });
        assert!(read_ptx("", &classes).is_err());
        // An incomplete class measures zeros, which nvcc leaves unwritten.
        let opaque = ".global .align 8 .b8 __memplan_layout_0[16];\n";
        assert_eq!(read_ptx(opaque, &["Opaque".to_owned()]), Ok(Layouts::new()));
    }
}
