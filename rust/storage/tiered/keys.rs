//! The keys of encrypted tiered segments: RSA private keys by key id, which unwrap each
//! segment's AES-256 data key, and the AES-GCM decryption of a chunk.

use crate::error::{Error, ErrorKind, Result};
use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use std::collections::HashMap;
use std::path::Path;

/// GCM's IV, before each encrypted chunk (the plugin's `ivSize`).
pub(super) const IV_LEN: usize = 12;
/// GCM's tag, after each encrypted chunk (128 bits, Java's default).
pub(super) const TAG_LEN: usize = 16;

/// The RSA private keys that unwrap segments' data keys, by the key id the manifests name.
#[derive(Clone, Default)]
pub struct KeyRing {
    keys: HashMap<String, rsa::RsaPrivateKey>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<&String> = self.keys.keys().collect();
        ids.sort();
        write!(f, "KeyRing({ids:?})")
    }
}

impl KeyRing {
    /// Adds the key `id`: a PEM private key (PKCS#8, as the plugin reads its key files, or
    /// PKCS#1), or its DER bytes.
    pub fn add(&mut self, id: &str, key: &[u8]) -> Result<()> {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::pkcs8::DecodePrivateKey;
        let parsed = match std::str::from_utf8(key) {
            Ok(text) if text.contains("-----BEGIN") => rsa::RsaPrivateKey::from_pkcs8_pem(text)
                .ok()
                .or_else(|| rsa::RsaPrivateKey::from_pkcs1_pem(text).ok()),
            _ => rsa::RsaPrivateKey::from_pkcs8_der(key)
                .ok()
                .or_else(|| rsa::RsaPrivateKey::from_pkcs1_der(key).ok()),
        };
        let parsed = parsed.ok_or_else(|| {
            Error::new(
                ErrorKind::EncryptionKey,
                format!(
                "encryption key {id:?} is not an RSA private key (PEM or DER, PKCS#8 or PKCS#1)"
            ),
            )
        })?;
        self.keys.insert(id.to_string(), parsed);
        Ok(())
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Unwraps a data key as the plugin wraps it: RSA-OAEP, SHA3-512 as the digest and in
    /// MGF1 (BouncyCastle's `OAEPWithSHA3-512AndMGF1Padding`), no label.
    pub(super) fn unwrap(&self, manifest: &Path, key_id: &str, wrapped: &[u8]) -> Result<[u8; 32]> {
        let key = self.keys.get(key_id).ok_or_else(|| {
            Error::new(
                ErrorKind::EncryptionKey,
                format!(
                    "segment is encrypted with key {key_id:?}, which was not given (pass \
                 encryption_keys={{{key_id:?}: <private key PEM or path>}})"
                ),
            )
            .with_path(manifest)
        })?;
        let unwrapped = key
            .decrypt(rsa::Oaep::new::<sha3::Sha3_512>(), wrapped)
            .map_err(|_| {
                Error::new(
                    ErrorKind::EncryptionKey,
                    format!(
                        "the data key could not be unwrapped with key {key_id:?} (a wrong key, or \
                     an altered manifest)"
                    ),
                )
                .with_path(manifest)
            })?;
        unwrapped.as_slice().try_into().map_err(|_| {
            Error::new(
                ErrorKind::Decryption,
                format!(
                    "the unwrapped data key has {} bytes, not 32 (AES-256)",
                    unwrapped.len()
                ),
            )
            .with_path(manifest)
        })
    }
}

pub(super) fn decrypt(
    cipher: &Aes256Gcm,
    aad: &[u8],
    bytes: &[u8],
) -> std::result::Result<Vec<u8>, String> {
    if bytes.len() < IV_LEN + TAG_LEN {
        return Err(format!(
            "{} bytes cannot hold a GCM IV and tag",
            bytes.len()
        ));
    }
    cipher
        .decrypt(
            Nonce::from_slice(&bytes[..IV_LEN]),
            Payload {
                msg: &bytes[IV_LEN..],
                aad,
            },
        )
        .map_err(|_| "AES-GCM authentication failed (a wrong key, or altered bytes)".to_string())
}

/// Storage option naming an RSA private key (PEM) by its key id.
pub const KEY_OPTION: &str = "kafkalog.encryption_key.";
