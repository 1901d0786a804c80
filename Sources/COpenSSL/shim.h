// What Swift needs from OpenSSL's libcrypto (3.x): SHA-256, HMAC-SHA-256, a constant-time
// comparison, reading a PEM public key to check its type and size, verifying RS256 and
// ES256 signatures with that key, and random bytes (RAND_bytes and RAND_priv_bytes, called as
// they are). Each wrapper is `pso_` prefixed and says why it exists.
#ifndef PANES_COPENSSL_SHIM_H
#define PANES_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdatomic.h>

/// One call for a SHA-256 digest, `out` 32 bytes; returns 1 on success. libcrypto's SHA-256
/// functions themselves, on a context on the stack: through EVP (a context made once per thread
/// and reused, the algorithm fetched once) each digest also went through the provider's dispatch
/// and copied its context, about 800 instructions of the ~3,000 a resume's secret took (issue 27
/// §5). Instructions per digest of 32 bytes, measured with callgrind on this libcrypto:
/// SHA256() 5,800, EVP_Digest with the algorithm fetched once 3,400, the reused EVP context
/// 2,900, this ~2,250 (the compression of the one block, ~2,000, is the same code in all four).
/// OpenSSL 3 marks these functions deprecated in favour of EVP, and still exports them (they
/// are what its default provider's SHA-256 calls); a libcrypto without them would fail the link.
static inline int pso_sha256(const void *data, size_t length, unsigned char *out) {
    SHA256_CTX context;
    return SHA256_Init(&context) == 1 && SHA256_Update(&context, data, length) == 1 && SHA256_Final(out, &context) == 1;
}

/// HMAC-SHA-256 in one call, so the key and message never need an HMAC context in Swift.
/// `out` holds 32 bytes. Returns 1 on success.
static inline int pso_hmac_sha256(const void *key, int keyLength, const unsigned char *data, size_t length,
                                  unsigned char *out) {
    unsigned int written = 0;
    return HMAC(EVP_sha256(), key, keyLength, data, length, out, &written) != NULL && written == 32;
}

/// Reads a PEM public key (`-----BEGIN PUBLIC KEY-----`) from memory. PEM_read_bio_PUBKEY
/// takes a passphrase callback Swift would have to spell as a nil C function pointer.
static inline EVP_PKEY *pso_read_public_key(const void *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return key;
}

/// The curve's short name of an EC key ("prime256v1" for P-256), or 0 if it has none;
/// EVP_PKEY_get_utf8_string_param needs the OSSL_PKEY_PARAM_GROUP_NAME macro.
static inline int pso_ec_curve_name(const EVP_PKEY *key, char *name, size_t capacity) {
    size_t length = 0;
    return EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, name, capacity, &length);
}

/// EVP_PKEY_RSA and EVP_PKEY_EC are macros over NIDs; Swift sees the NIDs but not the names.
static inline int pso_key_is_rsa(const EVP_PKEY *key) { return EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA; }
static inline int pso_key_is_ec(const EVP_PKEY *key) { return EVP_PKEY_get_base_id(key) == EVP_PKEY_EC; }

/// Verifies `signature` over `data` with SHA-256 and a key read once at start (RSASSA-PKCS1-v1_5
/// for an RSA key, ECDSA with a DER signature for an EC key): EVP_DigestVerify needs a context
/// Swift would otherwise allocate and free by hand. Returns 1 when the signature is good.
static inline int pso_verify_sha256(EVP_PKEY *key, const unsigned char *data, size_t length,
                                    const unsigned char *signature, size_t signatureLength) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) return 0;
    int good = EVP_DigestVerifyInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestVerify(context, signature, signatureLength, data, length) == 1;
    EVP_MD_CTX_free(context);
    return good;
}

/// An ES256 signature is R and S, 32 bytes each (RFC 7518 §3.4); OpenSSL verifies DER. Writes
/// the DER form to `der` (72 bytes hold any) and returns its length, or 0 for anything but 64
/// bytes. The BIGNUM and ECDSA_SIG calls and their ownership rules stay on this side.
static inline int pso_ecdsa_raw_to_der(const unsigned char *raw, size_t length, unsigned char *der, size_t capacity) {
    if (length != 64) return 0;
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL), *s = BN_bin2bn(raw + 32, 32, NULL);
    if (sig == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(sig, r, s) != 1) {
        ECDSA_SIG_free(sig);
        BN_free(r);
        BN_free(s);
        return 0;
    }
    int needed = i2d_ECDSA_SIG(sig, NULL);
    int written = 0;
    if (needed > 0 && (size_t)needed <= capacity) {
        unsigned char *out = der;
        written = i2d_ECDSA_SIG(sig, &out);
    }
    ECDSA_SIG_free(sig);
    return written;
}

#endif
