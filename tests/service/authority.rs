//! A test certificate authority and a TLS server configuration certified by it for 127.0.0.1 and
//! localhost: what the webhook receivers of the tests and of the load run present. Shared with the
//! load-run receiver (`examples/webhook_receiver.rs`), which includes this file.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tokio_rustls::rustls::{self, pki_types::PrivateKeyDer};

/// A fresh authority named `name`: its certificate in PEM, for the service to trust, and the
/// server configuration of a receiver it certified.
pub fn certified_receiver(name: &str) -> (String, Arc<rustls::ServerConfig>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let authority = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &authority)
        .unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], PrivateKeyDer::Pkcs8(key.serialize_der().into()))
        .unwrap();
    (authority.pem(), Arc::new(config))
}
