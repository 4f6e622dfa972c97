//! The host views every plan type has, written once: `memplan!` invokes
//! [`plan_views!`](crate::__plan_views) inside the plan's `const _` block
//! as `plan_views!(Plan, State, PlanHost, PlanHostMut, [buffer: elem, ..])`,
//! with the host buffers' names and element types; it makes the two view
//! structs and `impl memplan::Plan`, whose `host` and `host_mut` borrow
//! each buffer of the state as a slice. A plan with host steps names, after
//! the list, the function that runs them (`memplan!` writes it beside).

/// The host views of a plan type; see `memplan-runtime/src/plan/views.rs`.
#[doc(hidden)]
#[macro_export]
macro_rules! __plan_views {
    // A plan with host buffers.
    (
        $plan:ident, $state:ty, $view:ident, $view_mut:ident,
        [$($field:ident: $elem:ty),+ $(,)?] $(, $host_step:ident)?
    ) => {
        $crate::__plan_views!(@structs $plan, $view, $view_mut, [$($field: $elem),+]);

        impl $crate::Plan for $plan {
            type Host<'p> = $view<'p>;
            type HostMut<'p> = $view_mut<'p>;
            type State = $state;

            fn host(state: &$state) -> $view<'_> {
                $view { $($field: &state.$field,)+ }
            }

            fn host_mut(state: &mut $state) -> $view_mut<'_> {
                $view_mut { $($field: &mut state.$field,)+ }
            }

            $($crate::__plan_views!(@host_step $plan, $state, $host_step);)?
        }
    };
    // A plan without host buffers.
    ($plan:ident, $state:ty, $view:ident, $view_mut:ident, [] $(, $host_step:ident)?) => {
        $crate::__plan_views!(@structs $plan, $view, $view_mut, []);

        impl $crate::Plan for $plan {
            type Host<'p> = $view<'p>;
            type HostMut<'p> = $view_mut<'p>;
            type State = $state;

            fn host(_: &$state) -> $view<'_> {
                $view { __memplan_plan: ::core::marker::PhantomData }
            }

            fn host_mut(_: &mut $state) -> $view_mut<'_> {
                $view_mut { __memplan_plan: ::core::marker::PhantomData }
            }

            $($crate::__plan_views!(@host_step $plan, $state, $host_step);)?
        }
    };
    // A plan with errors: the program will not be built, but its type and
    // views exist for the code that uses them, and nothing runs.
    (placeholder $plan:ident, $view:ident, $view_mut:ident, [$($fields:tt)*]) => {
        $crate::__plan_views!(@structs $plan, $view, $view_mut, [$($fields)*]);

        impl $crate::Plan for $plan {
            type Host<'p> = $view<'p>;
            type HostMut<'p> = $view_mut<'p>;
            type State = ();

            fn host(_: &()) -> $view<'_> {
                ::core::unreachable!("memplan: this plan has errors")
            }

            fn host_mut(_: &mut ()) -> $view_mut<'_> {
                ::core::unreachable!("memplan: this plan has errors")
            }
        }
    };
    (@host_step $plan:ident, $state:ty, $host_step:ident) => {
        fn host_step(
            state: &mut $state,
            step: u16,
            slices: &mut [$crate::__private::Slice<'_>],
        ) -> ::core::result::Result<(), $crate::__private::Fault> {
            <$plan>::$host_step(state, step, slices)
        }
    };
    // The views of a plan without host buffers still need their lifetime.
    (@structs $plan:ident, $view:ident, $view_mut:ident, []) => {
        $crate::__plan_views!(@struct $plan, $view, "read", "host", {
            __memplan_plan: ::core::marker::PhantomData<&'p ()>,
        });
        $crate::__plan_views!(@struct $plan, $view_mut, "write", "host_mut", {
            __memplan_plan: ::core::marker::PhantomData<&'p mut ()>,
        });
    };
    (@structs $plan:ident, $view:ident, $view_mut:ident, [$($field:ident: $elem:ty),+ $(,)?]) => {
        $crate::__plan_views!(@struct $plan, $view, "read", "host", { $(pub $field: &'p [$elem],)+ });
        $crate::__plan_views!(@struct $plan, $view_mut, "write", "host_mut", { $(pub $field: &'p mut [$elem],)+ });
    };
    (@struct $plan:ident, $view:ident, $how:literal, $method:literal, { $($fields:tt)* }) => {
        #[doc = concat!("The host buffers of `", stringify!($plan), "`, borrowed to ", $how, "; from `", stringify!($plan), "::", $method, "`.")]
        pub struct $view<'p> {
            $($fields)*
        }
    };
}
