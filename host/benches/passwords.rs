//! The cost of one Argon2id password hash with the service's parameters, on one core.
//!
//! `cargo bench -p castellan --bench passwords`

use std::time::Instant;

use castellan::passwords::{ITERATIONS, MEMORY_KIB, PARALLELISM, hash_blocking, verify_blocking};

fn main() {
    let rounds = 40;
    let stored = hash_blocking("warm up the allocator and the caches");
    let started = Instant::now();
    for round in 0..rounds {
        std::hint::black_box(hash_blocking(&format!("correct horse battery staple {round}")));
    }
    let hash = started.elapsed() / rounds;
    let started = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(verify_blocking("correct horse battery staple", &stored));
    }
    let verify = started.elapsed() / rounds;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("Argon2id m={MEMORY_KIB} KiB, t={ITERATIONS}, p={PARALLELISM}: hash {hash:.2?}, verify {verify:.2?}");
    println!(
        "ceiling for password sign-ins on {cores} cores: {:.0}/s (cores ÷ verify time)",
        cores as f64 / verify.as_secs_f64()
    );
}
