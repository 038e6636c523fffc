//! The cost of one Argon2id password hash with the service's parameters: alone on one core, and
//! with every core hashing at once (what a server under sign-in load does).
//!
//! `cargo bench -p castellan --bench passwords`

use std::time::{Duration, Instant};

use castellan::kernel::passwords::{ITERATIONS, MEMORY_KIB, PARALLELISM, hash_blocking, verify_blocking};

const ROUNDS: u32 = 40;

/// The mean time of one verification when `threads` threads verify at once.
fn verify_time(threads: usize, stored: &str) -> Duration {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    std::hint::black_box(verify_blocking("correct horse battery staple", stored));
                }
            });
        }
    });
    started.elapsed() / ROUNDS
}

fn main() {
    let stored = hash_blocking("correct horse battery staple");
    let started = Instant::now();
    for round in 0..ROUNDS {
        std::hint::black_box(hash_blocking(&format!("correct horse battery staple {round}")));
    }
    let hash = started.elapsed() / ROUNDS;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let alone = verify_time(1, &stored);
    let together = verify_time(cores, &stored);
    println!("Argon2id m={MEMORY_KIB} KiB, t={ITERATIONS}, p={PARALLELISM}");
    println!("one core: hash {hash:.2?}, verify {alone:.2?}");
    println!("{cores} cores verifying at once: {together:.2?} per verification on each core");
    println!(
        "ceiling for password sign-ins: {:.0}/s (cores ÷ verify time alone), {:.0}/s (with every core hashing)",
        cores as f64 / alone.as_secs_f64(),
        cores as f64 / together.as_secs_f64()
    );
}
