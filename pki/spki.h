/* spki.h - internal: SubjectPublicKeyInfo and PKCS#10 parsed with OpenSSL's
 * ASN.1 templates but without OpenSSL 3.0's provider decoder chain.
 *
 * Why: in 3.0 every d2i_PUBKEY / d2i_X509_REQ builds an OSSL_DECODER chain to
 * turn the key into an EVP_PKEY, measured at 100-150 us per call here - as much
 * as an Ed25519 verify, on every admission. The keys the protocol allows
 * (Ed25519, RSA, EC on a named curve) are imported directly from their
 * components instead; anything else goes through the generic decoder. */
#ifndef TG_PKI_SPKI_H
#define TG_PKI_SPKI_H

#include <openssl/asn1t.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

typedef struct tg_spki_st {
    X509_ALGOR *algor;
    ASN1_BIT_STRING *key;
} TG_SPKI;
DECLARE_ASN1_FUNCTIONS(TG_SPKI)

/* A Name as plain nested stacks (SEQUENCE OF SET OF AttributeTypeAndValue):
 * X509_NAME's decoder also builds a canonical copy for comparisons we never
 * make, which costs more than the rest of the request. */
typedef OPENSSL_STACK TG_NAME;   /* of STACK_OF(X509_NAME_ENTRY), one per RDN */
DECLARE_ASN1_ITEM(TG_NAME)

/* Entries across all RDNs, in order. */
int tg_name_entry_count(const TG_NAME *name);
const X509_NAME_ENTRY *tg_name_entry(const TG_NAME *name, int i);

/* PKCS#10 CertificationRequestInfo; enc keeps the received bytes so the
 * self-signature is checked over exactly what was signed. */
typedef struct tg_req_info_st {
    ASN1_ENCODING enc;
    ASN1_INTEGER *version;
    TG_NAME *subject;
    TG_SPKI *spki;
    STACK_OF(X509_ATTRIBUTE) *attributes;
} TG_REQ_INFO;
DECLARE_ASN1_FUNCTIONS(TG_REQ_INFO)

typedef struct tg_req_st {
    TG_REQ_INFO *info;
    X509_ALGOR *sig_alg;
    ASN1_BIT_STRING *signature;
} TG_REQ;
DECLARE_ASN1_FUNCTIONS(TG_REQ)

/* X.509 TBSCertificate the same way: the names as plain stacks, the key
 * undecoded (d2i_X509 decodes both, the key through the decoder chain). */
typedef struct tg_cert_info_st {
    ASN1_INTEGER *version;       /* [0] EXPLICIT, optional */
    ASN1_INTEGER *serial;
    X509_ALGOR *sig_alg;
    TG_NAME *issuer;
    X509_VAL *validity;
    TG_NAME *subject;
    TG_SPKI *spki;
    ASN1_BIT_STRING *issuer_uid;           /* [1] IMPLICIT, optional */
    ASN1_BIT_STRING *subject_uid;          /* [2] IMPLICIT, optional */
    STACK_OF(X509_EXTENSION) *extensions;  /* [3] EXPLICIT, optional */
} TG_CERT_INFO;
DECLARE_ASN1_FUNCTIONS(TG_CERT_INFO)

typedef struct tg_cert_st {
    TG_CERT_INFO *info;
    X509_ALGOR *sig_alg;
    ASN1_BIT_STRING *signature;
} TG_CERT;
DECLARE_ASN1_FUNCTIONS(TG_CERT)

typedef enum tg_spki_status {
    TG_SPKI_OK = 0,
    TG_SPKI_UNSUPPORTED,       /* an algorithm outside Ed25519 / RSA / EC */
    TG_SPKI_EXPLICIT_CURVE,    /* EC with explicit parameters instead of a named curve */
    TG_SPKI_BAD_KEY,           /* a supported algorithm, but the key material is invalid */
    TG_SPKI_BAD_RSA_EXPONENT,  /* RSA public exponent of 2^31 or more */
} tg_spki_status;

/* The EVP_PKEY for Ed25519, RSA and named-curve EC keys; NULL with *status
 * otherwise. */
EVP_PKEY *tg_spki_to_pkey(const TG_SPKI *spki, tg_spki_status *status);

/* Ed25519 keys are not imported into OpenSSL (keys_internal.h): 1 and *raw
 * pointing at the 32 key bytes inside spki when it is a well-formed Ed25519
 * SPKI (RFC 8410: parameters absent, 32 whole octets); 0 when spki has another
 * algorithm; -1 when it says Ed25519 but the key is malformed. */
int tg_spki_ed25519_raw(const TG_SPKI *spki, const unsigned char **raw);

/* The same, falling back to OpenSSL's generic decoder for other algorithms
 * (slow; for keys we only need to verify a signature with). NULL with *status
 * when neither works. */
EVP_PKEY *tg_spki_to_pkey_any(const TG_SPKI *spki, tg_spki_status *status);

/* What is wrong with a key, as the "found ..." part of a message. */
const char *tg_spki_status_text(tg_spki_status status);

/* An Ed25519 SPKI around a raw 32-byte key; NULL on error. */
TG_SPKI *tg_spki_ed25519(const unsigned char raw[32]);

/* Short name of the key algorithm ("ED25519", "rsaEncryption") or its OID. */
const char *tg_spki_algorithm(const TG_SPKI *spki, char *buf, size_t len);

#endif
