/* ozgemm/export.h — symbol visibility. The shared library is built with hidden visibility; only
 * declarations marked OZGEMM_API (the public C API and the C++ layer's out-of-line functions)
 * are exported. The static library and consumers see an empty or import attribute. */
#ifndef OZGEMM_EXPORT_H
#define OZGEMM_EXPORT_H

#if defined(_WIN32)
#define OZGEMM_API
#elif defined(__GNUC__)
#define OZGEMM_API __attribute__((visibility("default")))
#else
#define OZGEMM_API
#endif

#endif /* OZGEMM_EXPORT_H */
