//! A credential's public key as an authenticator writes it: a COSE key (RFC 9052, RFC 9053), and
//! the signature algorithms this service verifies with `aws-lc-rs`. The COSE bytes are what is
//! stored; they are read again to verify each assertion.

use aws_lc_rs::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};

use super::Refused;
use super::cbor::{self, Value};

/// The COSE algorithms taken: those browsers ask authenticators for, in the order of preference
/// the registration options list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// ECDSA with P-256 and SHA-256: what nearly every passkey uses.
    Es256,
    /// EdDSA with Ed25519.
    EdDsa,
    /// ECDSA with P-384 and SHA-384.
    Es384,
    /// RSASSA-PSS with SHA-256.
    Ps256,
    /// RSASSA-PKCS1-v1_5 with SHA-256: Windows Hello's keys.
    Rs256,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [Self::Es256, Self::EdDsa, Self::Es384, Self::Ps256, Self::Rs256];

    /// The COSE algorithm identifier.
    pub fn identifier(self) -> i64 {
        match self {
            Self::Es256 => -7,
            Self::EdDsa => -8,
            Self::Es384 => -35,
            Self::Ps256 => -37,
            Self::Rs256 => -257,
        }
    }

    fn of(identifier: i128) -> Option<Self> {
        Self::ALL.into_iter().find(|algorithm| i128::from(algorithm.identifier()) == identifier)
    }
}

/// A credential's public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    pub algorithm: Algorithm,
    /// The COSE key as the authenticator wrote it.
    pub cose: Vec<u8>,
    material: Material,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    /// An uncompressed elliptic curve point (`04 || x || y`), or an Ed25519 key's 32 bytes.
    Point(Vec<u8>),
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
}

const KTY: i128 = 1;
const ALG: i128 = 3;
const OKP: i128 = 1;
const EC2: i128 = 2;
const RSA: i128 = 3;

impl PublicKey {
    /// Reads a COSE key, refusing any algorithm, curve or key size outside those above.
    pub fn from_cose(cose: &[u8]) -> Result<Self, Refused> {
        let key = cbor::decode(cose).map_err(|_| Refused::Malformed("the public key"))?;
        let integer = |label| key.label(label).and_then(Value::as_integer);
        let bytes = |label| key.label(label).and_then(Value::as_bytes).ok_or(Refused::Malformed("the public key"));
        let algorithm = integer(ALG).and_then(Algorithm::of).ok_or(Refused::Algorithm)?;
        let (kty, crv) = (integer(KTY), integer(-1));
        let material = match (algorithm, kty, crv) {
            (Algorithm::Es256, Some(EC2), Some(1)) => point(bytes(-2)?, bytes(-3)?, 32)?,
            (Algorithm::Es384, Some(EC2), Some(2)) => point(bytes(-2)?, bytes(-3)?, 48)?,
            (Algorithm::EdDsa, Some(OKP), Some(6)) => {
                let x = bytes(-2)?;
                if x.len() != 32 {
                    return Err(Refused::Malformed("the public key"));
                }
                Material::Point(x.to_vec())
            }
            (Algorithm::Rs256 | Algorithm::Ps256, Some(RSA), _) => {
                let (n, e) = (bytes(-1)?, bytes(-2)?);
                // 2048 to 8192 bits, as the verification algorithms accept.
                if !(256..=1024).contains(&n.len()) || e.is_empty() || e.len() > 8 {
                    return Err(Refused::Malformed("the public key"));
                }
                Material::Rsa { n: n.to_vec(), e: e.to_vec() }
            }
            _ => return Err(Refused::Algorithm),
        };
        Ok(Self { algorithm, cose: cose.to_vec(), material })
    }

    /// Verifies `signature` over `message`.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Refused> {
        let verified = match (&self.material, self.algorithm) {
            (Material::Point(point), Algorithm::Es256) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_ASN1, point).verify(message, signature)
            }
            (Material::Point(point), Algorithm::Es384) => {
                UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_ASN1, point).verify(message, signature)
            }
            (Material::Point(point), Algorithm::EdDsa) => {
                UnparsedPublicKey::new(&signature::ED25519, point).verify(message, signature)
            }
            (Material::Rsa { n, e }, Algorithm::Rs256) => {
                RsaPublicKeyComponents { n, e }.verify(&signature::RSA_PKCS1_2048_8192_SHA256, message, signature)
            }
            (Material::Rsa { n, e }, Algorithm::Ps256) => {
                RsaPublicKeyComponents { n, e }.verify(&signature::RSA_PSS_2048_8192_SHA256, message, signature)
            }
            _ => return Err(Refused::Algorithm),
        };
        verified.map_err(|_| Refused::Signature)
    }
}

fn point(x: &[u8], y: &[u8], size: usize) -> Result<Material, Refused> {
    if x.len() != size || y.len() != size {
        return Err(Refused::Malformed("the public key"));
    }
    let mut point = Vec::with_capacity(1 + 2 * size);
    point.push(0x04);
    point.extend_from_slice(x);
    point.extend_from_slice(y);
    Ok(Material::Point(point))
}
