/* file_pages.h - hand back the resident pages of clean file mappings.
 *
 * A process's RSS counts every page of its program and shared libraries that
 * it has touched since it started: relocation, constructors, the one-time
 * set-up of OpenSSL and of libcurl's chain (gnutls, krb5, ...). Most of those
 * pages are never used again, yet the webhook's idle RSS was two thirds
 * library pages. tg_file_pages_release() drops this process's references to
 * the file-backed pages that are still identical to their file: the kernel
 * keeps them in the page cache (they are shared with every other process
 * mapping the same file), and a page used again comes back with a minor
 * fault, without I/O. Nothing private is touched: writable mappings and any
 * mapping with a page this process modified (relocated read-only data) are
 * skipped whole. */
#ifndef TG_COMMON_FILE_PAGES_H
#define TG_COMMON_FILE_PAGES_H

#include <stddef.h>

/* Returns the resident bytes those mappings held (what RSS drops by), or 0
 * when /proc/self/smaps cannot be read. Any thread; cost: one read of
 * /proc/self/smaps and one madvise(2) per mapping (~1 ms for the webhook). */
size_t tg_file_pages_release(void);

#endif
