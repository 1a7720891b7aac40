//! Two eyaml secrets for the tests that check no command prints what it decrypted:
//! `OLDSECRET1` and `NEWSECRET2`, encrypted (`openssl smime -encrypt -aes256`) for the test
//! key pair of fixtures/backends/eyaml/keys.

#![allow(dead_code)]

use std::path::Path;

/// What [`OLD`] decrypts to.
pub const OLD_PLAIN: &str = "OLDSECRET1";
/// What [`NEW`] decrypts to.
pub const NEW_PLAIN: &str = "NEWSECRET2";

/// `OLDSECRET1`, encrypted.
pub const OLD: &str = "ENC[PKCS7,MIIBeQYJKoZIhvcNAQcDoIIBajCCAWYCAQAxggEhMIIBHQIBADAFMAACAQEwDQYJKoZIhvcNAQEBBQAEggEAG+CRAEPbESzyfHutpoW4EJeEEiD2X4T1fZ8QCSYRJkZOBjkxyAqG5ZqlgPaoNUYfdjkaGMCMovz2ttXjcoiwQbh/+Nl6eCVZ3LuldqlTe3U9sj+5bFT69Y7W5iTa1LxMJlzESbCYjtcwZ/JteDCLQGKBZULlO7YpfhBCfaXrXpLauuroJhJ3kKL2/hKMspAfVzaXMiJzYA1aYsHzU48qLICD4SGTOFWm6d0P0VXdgjcVS4RM/dwWTHCgjhluSKSn2F+aax+U6ioE/K3cIap00kItLTHcxN91a6hk+4FyfqkdFT/WxSjtU2bqD80HGCrT5vSdrqBpuUIWEljNd8DZ8zA8BgkqhkiG9w0BBwEwHQYJYIZIAWUDBAEqBBBUQl89wvWPsbRYrs1ZBxImgBBU9u7R+Njlj6lBo8l/nQ3z]";
/// `NEWSECRET2`, encrypted.
pub const NEW: &str = "ENC[PKCS7,MIIBeQYJKoZIhvcNAQcDoIIBajCCAWYCAQAxggEhMIIBHQIBADAFMAACAQEwDQYJKoZIhvcNAQEBBQAEggEAAZHXngFTSgHt1cCuFTCFKQ+YDOPMgISmqDNxDdxCAuv9uklZxRuqFEDOQ54JNkoA4UqGvQCIL8O9LWVARiN/vaL9Ukp6Ze4OwUhLlBVgUmcHqgzzJmjnSjfDDuSnymOUL2FH5r/3xCG6FXcP7zGGl736nQqx1lkWPS7VzMX/J5akUDtHwPR48wLxMXIq1FB8GMxZjn4BRcM0P9pbD7M5cQyuMbmFIw9ZPKuKUaAYLXkEPYRHrB0HwgYOKiPePQXk8Cr5FUyhtgvATI9J9yvsOr74Crj1H4BFgHwMpAewp1UFhQajPwOOLiHnNJyPsRkpMVEWU87aII8yga4zBjCvFzA8BgkqhkiG9w0BBwEwHQYJYIZIAWUDBAEqBBBEk2nJtdysYAQtEreNDDiOgBAqeZxhWBqrnfoimHorHMDs]";

/// A hiera.yaml with an eyaml level (`secrets.eyaml`, the test keys by absolute path) above
/// `common.yaml`.
pub fn hiera_yaml() -> String {
    let keys = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backends/eyaml/keys");
    format!(
        "version: 5\nhierarchy:\n  - name: secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n    options:\n      pkcs7_private_key: {}\n      pkcs7_public_key: {}\n  - name: common\n    path: common.yaml\n",
        keys.join("private_key.pkcs7.pem").display(),
        keys.join("public_key.pkcs7.pem").display()
    )
}
