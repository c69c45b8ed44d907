/* vsnprintf for the kernel: %d %i %u %x %X %p %s %c %%, with l/ll/z, width,
 * '0' and '-' flags.  Enough for fault reports and boot messages. */
#include "kernel.h"

struct out {
    char *buf;
    size_t size, pos;
};

static void put(struct out *o, char c)
{
    if (o->pos + 1 < o->size)
        o->buf[o->pos] = c;
    o->pos++;
}

static void put_num(struct out *o, uint64_t v, bool neg, unsigned base, bool upper,
                    int width, bool zero, bool left)
{
    char tmp[24];
    int n = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v);
    int len = n + (neg ? 1 : 0);
    if (!left && !zero)
        for (; width > len; width--)
            put(o, ' ');
    if (neg)
        put(o, '-');
    if (!left && zero)
        for (; width > len; width--)
            put(o, '0');
    while (n)
        put(o, tmp[--n]);
    if (left)
        for (; width > len; width--)
            put(o, ' ');
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {buf, size, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        fmt++;
        bool zero = false, left = false;
        for (;; fmt++) {
            if (*fmt == '0')
                zero = true;
            else if (*fmt == '-')
                left = true;
            else
                break;
        }
        int width = 0;
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        int lng = 0;
        while (*fmt == 'l' || *fmt == 'z') {
            lng++;
            fmt++;
        }
        switch (*fmt) {
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            put_num(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0, 10, false, width, zero, left);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            put_num(&o, v, false, *fmt == 'u' ? 10 : 16, *fmt == 'X', width, zero, left);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uint64_t)va_arg(ap, void *), false, 16, false, 16, true, false);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            int len = (int)strlen(s);
            if (!left)
                for (; width > len; width--)
                    put(&o, ' ');
            while (*s)
                put(&o, *s++);
            if (left)
                for (; width > len; width--)
                    put(&o, ' ');
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case '%':
            put(&o, '%');
            break;
        default:
            put(&o, '%');
            if (*fmt)
                put(&o, *fmt);
            else
                fmt--;
        }
    }
    if (size)
        buf[o.pos < size ? o.pos : size - 1] = 0;
    return (int)o.pos;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* "64M", "2g", "4096", "1k": sizes on the command line. */
bool parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return false;
    while (*s >= '0' && *s <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s++ - '0');
    }
    unsigned shift = 0;
    switch (*s) {
    case 'k': case 'K': shift = 10; s++; break;
    case 'm': case 'M': shift = 20; s++; break;
    case 'g': case 'G': shift = 30; s++; break;
    }
    if (*s == 'i' || *s == 'B')
        s++;
    if (*s == 'B')
        s++;
    if (*s)
        return false;
    if (shift && v > (UINT64_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}
