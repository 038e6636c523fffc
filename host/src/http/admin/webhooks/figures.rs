//! The delivery figures of a client's endpoints (attempts, acceptance, latency, failures) and
//! the events with their fan-out status.
