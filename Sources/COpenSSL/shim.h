#ifndef PULSE_COPENSSL_SHIM_H
#define PULSE_COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/sha.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

/* Function-like and composite macros Swift cannot import, as functions. */

/* EVP_PKEY_fromdata selection for a public key with its domain parameters. */
static inline int pulse_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }

/* BIO_get_mem_data: the bytes written to a memory BIO so far. */
static inline long pulse_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

/* OPENSSL_free and OPENSSL_clear_free (the latter wipes before freeing: for key material). */
static inline void pulse_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
static inline void pulse_OPENSSL_clear_free(void *pointer, size_t count) { OPENSSL_clear_free(pointer, count); }
#endif
