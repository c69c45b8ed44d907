// std::thread and iostream: four threads each sum a quarter of a vector and
// say so through std::cout (a mutex keeps lines whole); the total must be
// the serial one.  hardware_concurrency is what the node reports.
#include <iostream>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

int main()
{
    const std::size_t n = 1 << 20;
    std::vector<long> v(n);
    std::iota(v.begin(), v.end(), 1);
    const long serial = std::accumulate(v.begin(), v.end(), 0L);
    std::mutex out;
    std::vector<long> part(4);
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; t++)
        workers.emplace_back([&, t] {
            part[t] = std::accumulate(v.begin() + t * (n / 4), v.begin() + (t + 1) * (n / 4), 0L);
            std::lock_guard<std::mutex> g(out);
            std::cout << "worker " << t << " done" << std::endl;
        });
    for (auto &w : workers)
        w.join();
    long total = std::accumulate(part.begin(), part.end(), 0L);
    std::cout << "total " << (total == serial ? "matches" : "DIFFERS from") << " the serial sum"
              << std::endl;
    std::cout << "hardware_concurrency " << std::thread::hardware_concurrency() << std::endl;
    return 0;
}
