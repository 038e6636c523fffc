//! A component of the `analyst` world that never answers: every reading traps. The service's tests
//! run with it to show that a reading the analyst cannot write is kept as failed, and can be asked
//! for again. Never use it in production.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

castellan_guest::runtime!();

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component {
    wit_bindgen::generate!({ world: "analyst", path: "../../wit" });

    use castellan::plugins::analyst_types as wit;

    struct Failing;

    impl Guest for Failing {
        fn read(_incident: wit::Incident, _language: wit::Language) -> wit::Reading {
            core::arch::wasm32::unreachable()
        }
    }

    export!(Failing);
}
