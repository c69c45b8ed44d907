/* Hands the kernel bad pointers and absurd lengths through raw system calls.
 * Every call must fail with the right errno; the program must survive to
 * print "all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int failures;

static void expect(const char *what, long ret, int want)
{
    int err = ret < 0 ? errno : 0;
    if (ret != -1 || err != want) {
        printf("FAIL %s: returned %ld errno %d (%s), wanted errno %d (%s)\n", what, ret, err,
               strerror(err), want, strerror(want));
        failures++;
    } else {
        printf("%s: %s ok\n", what, strerror(want));
    }
}

int main(void)
{
    char buf[64] = "hello";
    void *kernel = (void *)0xffffffff80100000UL;
    void *direct = (void *)0xffff800000100000UL;
    void *low = (void *)8;
    void *unmapped = (void *)0x7f0000000000UL;

    expect("write NULL+8", syscall(SYS_write, 1, low, 10), EFAULT);
    expect("write kernel address", syscall(SYS_write, 1, kernel, 10), EFAULT);
    expect("write huge length", syscall(SYS_write, 1, buf, (size_t)1 << 62), EFAULT);
    expect("write wrapping range", syscall(SYS_write, 1, buf, (size_t)-16), EFAULT);
    expect("write unmapped", syscall(SYS_write, 1, unmapped, 10), EFAULT);
    expect("read into kernel", syscall(SYS_read, 0, direct, 10), EFAULT);
    expect("read into NULL", syscall(SYS_read, 0, NULL, 10), EFAULT);
    expect("write bad fd", syscall(SYS_write, 77, buf, 5), EBADF);
    expect("clock_gettime bad pointer", syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (void *)1), EFAULT);
    expect("clock_gettime kernel pointer", syscall(SYS_clock_gettime, CLOCK_REALTIME, kernel), EFAULT);
    expect("clock_gettime bad clock", syscall(SYS_clock_gettime, 12345, buf), EINVAL);
    expect("nanosleep bad pointer", syscall(SYS_nanosleep, low, NULL), EFAULT);
    struct timespec bad_ns = {0, 2000000000L};
    expect("nanosleep bad nsec", syscall(SYS_nanosleep, &bad_ns, NULL), EINVAL);
    struct iovec iov[2] = {{buf, 5}, {kernel, 5}};
    expect("writev bad iovec entry", syscall(SYS_writev, 1, iov, 2), EFAULT);
    expect("writev bad iovec array", syscall(SYS_writev, 1, kernel, 2), EFAULT);
    expect("writev too many", syscall(SYS_writev, 1, iov, 100000), EINVAL);
    expect("uname NULL", syscall(SYS_uname, NULL), EFAULT);
    expect("open NULL path", syscall(SYS_open, NULL, 0), EFAULT);
    expect("open missing file", syscall(SYS_open, "/etc/passwd", 0), ENOENT);
    expect("getrandom kernel", syscall(SYS_getrandom, kernel, 16, 0), EFAULT);
    expect("rt_sigaction bad act", syscall(SYS_rt_sigaction, 10, kernel, NULL, 8), EFAULT);
    expect("sysinfo bad", syscall(SYS_sysinfo, low), EFAULT);
    expect("fstat bad buffer", syscall(SYS_fstat, 1, kernel), EFAULT);
    expect("arch_prctl kernel fs", syscall(SYS_arch_prctl, 0x1002, kernel), EPERM);
    expect("munmap unaligned", syscall(SYS_munmap, buf + 1, 4096), EINVAL);
    expect("mmap zero length", syscall(SYS_mmap, NULL, 0, 3, 0x22, -1, 0), EINVAL);
    expect("unknown system call 400", syscall(400), ENOSYS);
    expect("unknown system call 400 again", syscall(400), ENOSYS);
    expect("out-of-range system call", syscall(100000), ENOSYS);
    if (write(1, "write still works\n", 18) != 18)
        failures++;
    printf(failures ? "%d failures\n" : "all ok\n", failures);
    return failures != 0;
}
