/* The cost of an Ed25519 signature over a file's bytes with the system's OpenSSL (libcrypto 3),
 * to compare with swift-crypto's (BoringSSL) that the engine uses (Package.swift beside this file):
 * Ed25519 hashes the message twice with SHA-512, and BoringSSL has no AVX2 code for SHA-512 while
 * OpenSSL has (docs/performance.md, sixth stop of 27 November).
 *
 *   gcc -O2 bench/signing/openssl_ed25519.c -o /tmp/openssl-ed25519 -lcrypto && /tmp/openssl-ed25519
 *
 * (libssl-dev.) Prints, for 1, 16 and 64 MiB, the median of 5 signatures in ms and in ms per MiB. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *generator = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    if (!generator || EVP_PKEY_keygen_init(generator) != 1 || EVP_PKEY_keygen(generator, &key) != 1) return 1;
    printf("size_mib sign_ms sign_ms_per_mib\n");
    const size_t sizes[] = {1, 16, 64};
    for (int s = 0; s < 3; s++) {
        size_t count = sizes[s] << 20;
        unsigned char *message = malloc(count);
        if (!message) return 1;
        for (size_t i = 0; i < count; i++) message[i] = (unsigned char)(i * 131 + (i >> 13));
        double times[5];
        for (int run = 0; run < 5; run++) {
            unsigned char signature[64];
            size_t length = sizeof signature;
            struct timespec start, end;
            clock_gettime(CLOCK_MONOTONIC, &start);
            EVP_MD_CTX *context = EVP_MD_CTX_new();
            if (!context || EVP_DigestSignInit(context, NULL, NULL, NULL, key) != 1
                || EVP_DigestSign(context, signature, &length, message, count) != 1) return 1;
            EVP_MD_CTX_free(context);
            clock_gettime(CLOCK_MONOTONIC, &end);
            times[run] = (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6;
        }
        qsort(times, 5, sizeof times[0], compare);
        printf("%zu %.2f %.3f\n", sizes[s], times[2], times[2] / sizes[s]);
        free(message);
    }
    EVP_PKEY_free(key);
    EVP_PKEY_CTX_free(generator);
    return 0;
}
