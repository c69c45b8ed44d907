// std::call_once, pthread_once, std::mutex, and a std::thread (which
// throws std::system_error where threads cannot be created).
#include <cstdio>
#include <mutex>
#include <pthread.h>
#include <system_error>
#include <thread>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static void init() { once_runs++; }

int main()
{
    pthread_once(&once, init);
    pthread_once(&once, init);
    std::once_flag flag;
    int call_once_runs = 0;
    std::call_once(flag, [&] { call_once_runs++; });
    std::call_once(flag, [&] { call_once_runs++; });
    std::printf("pthread_once ran %d time(s), std::call_once ran %d time(s)\n", once_runs,
                call_once_runs);
    std::mutex m;
    {
        std::lock_guard<std::mutex> g(m);
        std::printf("std::mutex locked and unlocked\n");
    }
    try {
        std::thread t([] { std::printf("thread ran\n"); });
        t.join();
    } catch (const std::system_error &e) {
        std::printf("std::thread threw std::system_error\n");
    }
    std::printf("still running\n");
    return 0;
}
