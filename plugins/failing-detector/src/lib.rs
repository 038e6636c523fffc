//! A component of the `detector` world that never answers: when the source's failure count is odd
//! it traps, otherwise it runs until the host's deadline stops it. The host must then let the
//! attempt proceed as if protection were absent; the service's
//! tests run sign-ins against it. Never use it in production.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

/// How the component fails for an attempt with this many source failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Trap,
    RunForever,
}

pub fn failure(source_failures: u32) -> Failure {
    if source_failures % 2 == 1 { Failure::Trap } else { Failure::RunForever }
}

castellan_guest::runtime!();

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod component {
    wit_bindgen::generate!({ world: "detector", path: "../../wit" });

    use castellan::plugins::detector_types as wit;

    struct Failing;

    impl Guest for Failing {
        fn decide(attempt: wit::Attempt) -> wit::Decision {
            match super::failure(attempt.counts.source_failures) {
                super::Failure::Trap => core::arch::wasm32::unreachable(),
                super::Failure::RunForever => loop {
                    core::hint::spin_loop();
                },
            }
        }
    }

    export!(Failing);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_counts_trap_and_even_ones_run_forever() {
        assert_eq!(failure(1), Failure::Trap);
        assert_eq!(failure(0), Failure::RunForever);
        assert_eq!(failure(2), Failure::RunForever);
    }
}
