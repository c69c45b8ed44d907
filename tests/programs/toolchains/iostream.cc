// C++ as users write it: iostream, strings, containers, exceptions.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

static int parse(const std::string &s)
{
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("not a number: '" + s + "'");
    return std::stoi(s);
}

int main()
{
    std::cout << "hello from C++" << std::endl;
    std::map<std::string, int> counts;
    for (const char *w : {"node", "yod", "node", "portals", "node"})
        counts[w]++;
    for (const auto &kv : counts)
        std::cout << kv.first << " " << kv.second << "\n";
    std::vector<std::string> inputs{"42", "x7", ""};
    for (const auto &s : inputs) {
        try {
            int v = parse(s);
            std::cout << "parsed " << v << "\n";
        } catch (const std::exception &e) {
            std::cout << "caught: " << e.what() << "\n";
        }
    }
    std::cerr << "to stderr" << std::endl;
    return 0;
}
