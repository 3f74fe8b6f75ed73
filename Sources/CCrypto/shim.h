// libcrypto (OpenSSL), on the machine already because libcurl links it: SHA-256 for a photo's identity.
#include <openssl/evp.h>
