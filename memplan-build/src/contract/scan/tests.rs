//! The scan of nvcc's printed declarations, on samples of its output.

use super::*;

/// nvcc 13.0's host code for cases the lookup must tell apart (line
/// markers removed): namespaces, a template, its instance, its wrapper
/// and a specialization, a `__device__` function, a default argument,
/// an `extern "C"` block, the host definitions that call the stubs.
pub(crate) const HOST_CODE: &str = r#"
namespace a { __attribute__((visibility("hidden"))) void k(__attribute((annotate("memplan:reads:n" ))) const float *p, int n) ;
}
namespace b { __attribute__((visibility("hidden"))) void k(float *p, int n) ;
}
template< class T> static void __wrapper__device_stub_fill(__attribute((annotate("memplan:writes:n" ))) T *&out, int &n) { ::cudaLaunchKernel(0, 0, 0, 0, 0, 0);}
template< class T> static void fill(__attribute((annotate("memplan:writes:n" ))) T *out, int n) {__wrapper__device_stub_fill<T>(out,n);return;}
template void fill< float> (
__attribute((annotate("memplan:writes:n" ))) float * out, int n);
template< class T> static void sc(__attribute((annotate("memplan:reads:n" ))) const T *in, __attribute((annotate("memplan:writes:n" ))) T *out, int n) {__wrapper__device_stub_sc<T>(in,out,n);return;}
template<> void sc< int> (__attribute((annotate("memplan:reads:2 * n" ))) const int *in, __attribute((annotate("memplan:writes:2 * n" ))) int *out, int n) {__wrapper__device_stub_sc<int>(in,out,n);return;}
namespace util { __attribute__((unused)) void touch(__attribute((annotate("memplan:reads:1" ))) const float *p, int n) {int volatile ___ = 1;(void)p;(void)n;::exit(___);}
}
__attribute__((visibility("hidden"))) void touch(float *p, int n) ;
extern "C" __attribute__((visibility("hidden"))) void dflt(__attribute((annotate("memplan:writes:n" ))) float *p, int n = 4) ;
extern "C" {__attribute__((visibility("hidden"))) void inblock(__attribute((annotate("memplan:writes:(n + 1) / 2" ))) float *p, [[maybe_unused]] int n) ;
}
__attribute__((visibility("hidden"))) auto tr(__attribute((annotate("memplan:writes:n" ))) float *p, int n)->void ;
void a::k( const float *__cuda_0,int __cuda_1)
{__device_stub__ZN1a1kEPKfi( __cuda_0,__cuda_1); }
void b::k( float *__cuda_0,int __cuda_1)
{__device_stub__ZN1b1kEPfi( __cuda_0,__cuda_1); }
void touch( float *__cuda_0,int __cuda_1)
{__device_stub__Z5touchPfi( __cuda_0,__cuda_1); }
void dflt( float *__cuda_0,int __cuda_1)
{__device_stub__Z4dfltPfi( __cuda_0,__cuda_1); }
void inblock( float *__cuda_0,int __cuda_1)
{__device_stub__Z7inblockPfi( __cuda_0,__cuda_1); }
void tr( float *__cuda_0,int __cuda_1)
{__device_stub__Z2trPfi( __cuda_0,__cuda_1); }
template<> void __wrapper__device_stub_fill<float>( float *&__cuda_0,int &__cuda_1){__device_stub__Z4fillIfEvPT_i( (float *&)__cuda_0,(int &)__cuda_1);}
template<> void __wrapper__device_stub_sc<float>( const float *&__cuda_0,float *&__cuda_1,int &__cuda_2){__device_stub__Z2scIfEvPKT_PS0_i( (const float *&)__cuda_0,(float *&)__cuda_1,(int &)__cuda_2);}
"#;

fn names(printed: &[Printed]) -> Vec<&str> {
    printed.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn every_declaration_at_namespace_scope_with_its_namespaces() {
    let found = printed(HOST_CODE);
    assert_eq!(
        names(&found),
        [
            "a::k",
            "b::k",
            "__wrapper__device_stub_fill",
            "fill",
            "fill<float>",
            "sc",
            "sc<int>",
            "util::touch",
            "touch",
            "dflt",
            "inblock",
            "tr",
            "a::k",
            "b::k",
            "touch",
            "dflt",
            "inblock",
            "tr",
            "__wrapper__device_stub_fill<float>",
            "__wrapper__device_stub_sc<float>",
        ]
    );
    assert!(found[4].instantiation);
    assert_eq!(found[18].base(), "fill");
    assert_eq!(found[18].stub_call.as_deref(), Some("_Z4fillIfEvPT_i"));
    assert_eq!(found[12].stub_call.as_deref(), Some("_ZN1a1kEPKfi"));
}

#[test]
fn a_kernels_declarations_and_host_definition_share_a_key() {
    let found = printed(HOST_CODE);
    assert_eq!(found[0].key, found[12].key, "a::k");
    assert_eq!(
        found[9].key, found[15].key,
        "dflt, with its default argument"
    );
    assert_eq!(found[10].key, found[16].key, "inblock");
    assert_ne!(found[11].key, found[17].key, "a trailing return type");
    assert_ne!(
        found[5].key, found[6].key,
        "a template and its specialization"
    );
}

#[test]
fn parameters_have_their_names_types_and_markers() {
    let found = printed(HOST_CODE);
    let a = &found[0];
    assert_eq!(a.params[0].name, "p");
    assert_eq!(a.params[0].ty, "constfloat*");
    assert_eq!(a.params[0].markers, [("reads".into(), "n".into())]);
    assert!(a.params[1].markers.is_empty());
    assert_eq!(found[9].params[1].name, "n");
    assert_eq!(found[10].params[1].name, "n");
    assert_eq!(found[12].params[0].name, "__cuda_0");
    let unnamed = param("float *");
    assert_eq!((unnamed.name.as_str(), unnamed.ty.as_str()), ("", "float*"));
    assert_eq!(plain_type("struct ::ns::Pair *"), "::ns::Pair*");
    assert_eq!(plain_type("b::S *"), "b::S*");
    assert_eq!(param("float *const").name, "");
    assert_eq!(param("float *a$b").name, "a$b");
    assert_eq!(plain_type("const unsigned int *"), "constunsignedint*");
}

#[test]
fn default_arguments_with_angles_and_commas_keep_the_names_in_place() {
    let list =
        "const float *in, int w = (lim > 1, 0), int n = 4, int big = lim < 2, float *out = nullptr";
    let names: Vec<String> = split_params(list).iter().map(|p| param(p).name).collect();
    assert_eq!(names, ["in", "w", "n", "big", "out"]);
    let typed = "Pair<int, float> p, int n";
    let names: Vec<String> = split_params(typed).iter().map(|p| param(p).name).collect();
    assert_eq!(names, ["p", "n"]);
}

#[test]
fn qualified_names_requires_clauses_and_blocks() {
    let code = r#"namespace ns { __attribute__((visibility("hidden"))) void k(float *p, int n) ;
}
template<> void ns::sc< int> (int *out, int n) {__wrapper__device_stub_sc<int>(out,n);return;}
template< class T> static void r(T *p, int n) requires (sizeof(T) == 8) {__wrapper__device_stub_r<T>(p,n);return;}
extern "C" { extern "C++" { __attribute__((visibility("hidden"))) void inner(float *p, int n) ; } }
namespace outer { inline namespace v1 { __attribute__((visibility("hidden"))) void v(float *p, int n) ;
} }"#;
    let found = printed(code);
    assert_eq!(
        names(&found),
        ["ns::k", "ns::sc<int>", "r", "inner", "outer::v1::v"]
    );
    assert!(
        found[2].key.ends_with("requires(sizeof(T)==8)"),
        "{}",
        found[2].key
    );
    assert!(!found[3].extern_c);
}
