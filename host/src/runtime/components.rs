//! Sandboxed components: pure functions behind the WIT worlds of `wit/`, run under wasmtime with a
//! memory limit and a deadline. Each component is linked once (its `InstancePre`); instances are
//! kept warm and reused, and one that traps or runs out of time is dropped and replaced by a fresh
//! one on the next call. Each wing keeps the adapter of its own component, which turns the world's
//! types into its own: the attack detector and the incident analyst in `protection`, the payload
//! builder in `operations::webhooks`.
//!
//! Calls are asynchronous and run in place, on the caller's task: the components answer in well
//! under a microsecond, so handing them to another thread would cost a hundred times the call. A
//! call that runs on yields to the runtime at every epoch tick (5 ms), so it never holds a worker
//! thread longer than that, and is stopped at its deadline.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::Context as _;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline};

/// Largest linear memory a component may grow to.
const MEMORY_LIMIT_BYTES: usize = 16 * 1024 * 1024;

/// How often the engine's epoch advances; a call's deadline is counted in these ticks.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The longest a single call may run, in epoch ticks (about 50 ms).
const DEADLINE_TICKS: u32 = 10;

/// Warm instances kept per component.
const POOL_SIZE: usize = 16;

/// The process's one engine, with its epoch ticking on a thread of its own: every component in
/// the process shares it.
fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine =
            Engine::new(&config).unwrap_or_else(|error| panic!("the wasmtime configuration is invalid: {error}"));
        let ticking = engine.clone();
        std::thread::Builder::new()
            .name("component-epoch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(EPOCH_TICK);
                    ticking.increment_epoch();
                }
            })
            .unwrap_or_else(|error| panic!("cannot start the component epoch thread: {error}"));
        engine
    })
}

/// Compiles a component for this process's engine.
pub fn compile(bytes: &[u8], what: &str) -> anyhow::Result<Component> {
    Component::new(engine(), bytes)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{what} is not a valid component"))
}

/// The component at `path`, or else the one the service embeds (`bytes`, compiled once per process
/// into `embedded`); `what` names it in errors.
pub fn load(
    path: Option<&std::path::Path>,
    embedded: &'static OnceLock<Result<Component, String>>,
    bytes: &[u8],
    what: &str,
) -> anyhow::Result<Component> {
    if let Some(path) = path {
        let read = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        return compile(&read, &path.display().to_string());
    }
    embedded
        .get_or_init(|| compile(bytes, what).map_err(|error| format!("{error:#}")))
        .clone()
        .map_err(|error| anyhow::anyhow!("{error}"))
}

/// What each store holds: its limits, and the epoch ticks its current call may still run.
pub struct Limits {
    limits: StoreLimits,
    ticks_left: u32,
}

/// A fresh store with the memory limit, for one instance. At each epoch tick a call yields to the
/// runtime, and once its ticks are spent it traps.
fn new_store() -> Store<Limits> {
    let limits = StoreLimitsBuilder::new().memory_size(MEMORY_LIMIT_BYTES).instances(4).build();
    let mut store = Store::new(engine(), Limits { limits, ticks_left: DEADLINE_TICKS });
    store.limiter(|state| &mut state.limits);
    store.epoch_deadline_callback(|mut context| {
        let state = context.data_mut();
        if state.ticks_left == 0 {
            return Err(wasmtime::Error::msg("the component ran past its deadline"));
        }
        state.ticks_left -= 1;
        Ok(UpdateDeadline::Yield(1))
    });
    store
}

/// Warm instances of one component: `T` is the world's generated bindings, `P` its pre-linked
/// form (`{World}Pre`), made once per component.
pub struct Pool<T, P> {
    pre: P,
    instantiate: fn(&P, &mut Store<Limits>) -> wasmtime::Result<T>,
    idle: Mutex<Vec<(Store<Limits>, T)>>,
}

impl<T, P> std::fmt::Debug for Pool<T, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pool(..)")
    }
}

impl<T, P> Pool<T, P> {
    /// Links `component` once (`link` makes the world's pre-linked form from its `InstancePre`),
    /// then instantiates it once, so that a component that cannot run under this world is refused
    /// at start.
    pub fn new(
        component: &Component,
        link: fn(InstancePre<Limits>) -> wasmtime::Result<P>,
        instantiate: fn(&P, &mut Store<Limits>) -> wasmtime::Result<T>,
    ) -> anyhow::Result<Arc<Self>> {
        // The worlds import nothing: a component gets no access to anything outside itself.
        let linker = Linker::new(engine());
        let pre = linker
            .instantiate_pre(component)
            .and_then(link)
            .map_err(anyhow::Error::from)
            .context("the component cannot be instantiated")?;
        let pool = Arc::new(Self { pre, instantiate, idle: Mutex::new(Vec::new()) });
        let mut store = new_store();
        (pool.instantiate)(&pool.pre, &mut store)
            .map_err(anyhow::Error::from)
            .context("the component cannot be instantiated")?;
        Ok(pool)
    }

    /// A warm instance (or a fresh one) for one call, with the call's deadline set. An instance
    /// whose call failed (a trap, the deadline, the memory limit) is not handed back.
    pub fn lease(&self) -> anyhow::Result<Lease<'_, T, P>> {
        let warm = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        let (mut store, instance) = match warm {
            Some(warm) => warm,
            None => {
                let mut store = new_store();
                let instance = (self.instantiate)(&self.pre, &mut store)?;
                (store, instance)
            }
        };
        store.data_mut().ticks_left = DEADLINE_TICKS;
        store.set_epoch_deadline(1);
        Ok(Lease { pool: self, store, instance })
    }
}

/// One instance of a pool, lent for one call: [`Lease::keep`] hands it back once the call
/// succeeded; dropped, it is discarded.
pub struct Lease<'p, T, P> {
    pool: &'p Pool<T, P>,
    pub store: Store<Limits>,
    pub instance: T,
}

impl<T, P> Lease<'_, T, P> {
    /// Hands the instance back to its pool for the next call.
    pub fn keep(self) {
        let mut idle = self.pool.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if idle.len() < POOL_SIZE {
            idle.push((self.store, self.instance));
        }
    }
}
