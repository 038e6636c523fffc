//! A test certificate authority and a TLS server configuration certified by it for 127.0.0.1 and
//! localhost: what the webhook receivers of the tests and of the load run present. Shared with the
//! load-run receiver (`examples/webhook_receiver.rs`), which includes this file.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tokio_rustls::rustls::{self, pki_types::PrivateKeyDer};

/// An authority, and a server it certified for 127.0.0.1 and localhost.
#[allow(dead_code)] // the load-run receiver reads only the authority and the configuration
pub struct Certified {
    /// The authority's certificate, in PEM.
    pub authority_pem: String,
    /// The server's certificate and private key, in PEM, for servers that read files.
    pub server_pem: String,
    pub key_pem: String,
    pub config: Arc<rustls::ServerConfig>,
}

/// A fresh authority named `name`, and a server it certified.
pub fn certified(name: &str) -> Certified {
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
    Certified {
        authority_pem: authority.pem(),
        server_pem: leaf.pem(),
        key_pem: key.serialize_pem(),
        config: Arc::new(config),
    }
}
