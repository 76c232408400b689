// What every front end is built over: the index and catalog store, the blob store, the identity
// service, and the credential lookup made from it once (SigV4 verification asks it per request).
// Each front end's own backend derives from it and adds its options and caches.
// Thread-safety: set up once before serving; read-only afterwards (the stores are thread-safe).
#pragma once

#include "auth/identity.h"
#include "auth/sigv4.h"
#include "blob/blob_store.h"
#include "meta/meta_store.h"

namespace serac::service {

struct FrontEndStores {
  meta::MetaStore* meta = nullptr;
  blob::BlobStore* blobs = nullptr;
  const auth::IdentityService* identity = nullptr;  // must outlive the front end
  auth::CredentialLookup credentials;               // identity->LookupFunction(), built once

  void Bind(meta::MetaStore* meta_in, blob::BlobStore* blobs_in, const auth::IdentityService* identity_in) {
    meta = meta_in;
    blobs = blobs_in;
    identity = identity_in;
    credentials = identity_in->LookupFunction();
  }
};

}  // namespace serac::service
