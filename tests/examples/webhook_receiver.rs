//! A webhook receiver for load runs (`bench/webhooks.sh`): HTTPS on a loopback port with a
//! certificate from a fresh test authority, whose PEM it writes where told, answering every
//! request with 204 as soon as the body has arrived.
//!
//!   cargo run --release -p castellan-tests --example webhook_receiver -- <port> <authority.pem>

#![allow(clippy::unwrap_used, clippy::expect_used)] // a load-run tool: failing loudly is right

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio_rustls::TlsAcceptor;

#[path = "../service/support/authority.rs"]
mod authority;

use authority::certified;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().expect("a port").parse().expect("a port number");
    let authority_file = args.next().expect("where to write the authority's certificate");

    let certified = certified("Castellan load-run authority");
    let (pem, config) = (certified.authority_pem, certified.config);
    std::fs::write(&authority_file, pem).unwrap();
    let acceptor = TlsAcceptor::from(config);

    let router = Router::new().fallback(|_body: Bytes| async { StatusCode::NO_CONTENT });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    println!("receiving at https://127.0.0.1:{port}/");
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        let (acceptor, router) = (acceptor.clone(), router.clone());
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else { return };
            let service = TowerToHyperService::new(router);
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
        });
    }
}
