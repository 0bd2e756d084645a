//! HTTPS: a rustls acceptor from PEM files.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::Error;

/// An acceptor for the certificate chain in `cert` and the private key in `key`.
pub(crate) fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, Error> {
    let bad = |what: &str, path: &Path, e: &dyn std::fmt::Display| {
        Error::Config(format!(
            "{what} {} cannot be used ({e}): give a PEM file (--tls-cert: the certificate chain, --tls-key: its private key)",
            path.display()
        ))
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad("the certificate file", cert, &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad("the certificate file", cert, &e))?;
    if chain.is_empty() {
        return Err(bad("the certificate file", cert, &"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| bad("the key file", key, &e))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS could not be set up: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            Error::Config(format!(
                "the TLS certificate and key do not fit together: {e}"
            ))
        })?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
