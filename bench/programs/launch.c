/* A trivial program for launch timing (bench/yod_launch.py): exits 0 at once.
 * PAD_BYTES of initialised read-only data make the file as big as wanted. */
#ifndef PAD_BYTES
#define PAD_BYTES 1
#endif
static const volatile unsigned char pad[PAD_BYTES] = {1};

int main(void) { return pad[0] - 1; }
