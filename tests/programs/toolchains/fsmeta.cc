// What C++ programs do to files beyond reading and writing them, through
// std::filesystem (libstdc++'s calls, not ours): permissions, modification
// times, symbolic and hard links, copies, space, removal of a tree.  Run in
// a fresh directory DIR; every line is the same on Linux.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

static const char *yes(bool ok) { return ok ? "yes" : "NO"; }

static std::string slurp(const fs::path &p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::cerr << "usage: fsmeta DIR\n";
        return 2;
    }
    std::cout << std::unitbuf;      // every line out, even if one throws
    fs::path d(argv[1]);
    std::error_code ec;
    fs::remove_all(d, ec);
    fs::create_directories(d / "tree" / "deep", ec);
    std::cout << "create_directories: " << (ec ? ec.message() : "ok") << "\n";

    fs::path f = d / "data";
    {
        std::ofstream out(f, std::ios::binary);
        for (int i = 0; i < 1000; i++)
            out << "line " << i << "\n";
    }
    std::string body = slurp(f);

    fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write, ec);
    auto p = fs::status(f).permissions();
    std::cout << "permissions 0600: " << (ec ? ec.message() : "ok") << ", reads back "
              << yes(p == (fs::perms::owner_read | fs::perms::owner_write)) << "\n";
    fs::permissions(f, fs::perms::group_read, fs::perm_options::add, ec);
    p = fs::status(f).permissions();
    std::cout << "add group_read: " << (ec ? ec.message() : "ok") << ", reads back "
              << yes((p & fs::perms::group_read) != fs::perms::none) << "\n";

    auto when = fs::last_write_time(f) - std::chrono::hours(24 * 365);
    fs::last_write_time(f, when, ec);
    auto back = fs::last_write_time(f);
    std::cout << "last_write_time a year back: " << (ec ? ec.message() : "ok")
              << ", reads back " << yes(back == when) << "\n";

    fs::path c = d / "copy";
    bool copied = fs::copy_file(f, c, ec);
    std::cout << "copy_file: " << (ec ? ec.message() : "ok") << ", same bytes "
              << yes(copied && slurp(c) == body) << "\n";
    copied = fs::copy_file(f, c, ec);
    std::cout << "copy_file again: " << (ec ? ec.message() : "ok") << "\n";
    copied = fs::copy_file(f, c, fs::copy_options::overwrite_existing, ec);
    std::cout << "copy_file overwrite_existing: " << (ec ? ec.message() : "ok") << "\n";

    fs::create_symlink("data", d / "link", ec);
    std::cout << "create_symlink: " << (ec ? ec.message() : "ok") << ", is_symlink "
              << yes(fs::is_symlink(d / "link")) << ", read_symlink "
              << fs::read_symlink(d / "link", ec) << ", through it "
              << yes(slurp(d / "link") == body) << "\n";
    fs::create_directory_symlink("tree", d / "dirlink", ec);
    std::cout << "create_directory_symlink: " << (ec ? ec.message() : "ok")
              << ", a directory through it " << yes(fs::is_directory(d / "dirlink" / "deep"))
              << "\n";

    fs::create_hard_link(f, d / "hard", ec);
    std::cout << "create_hard_link: " << (ec ? ec.message() : "ok") << ", hard_link_count "
              << fs::hard_link_count(f, ec) << ", equivalent "
              << yes(fs::equivalent(f, d / "hard", ec)) << "\n";

    std::vector<std::string> names;
    for (auto &e : fs::directory_iterator(d))
        names.push_back(e.path().filename().string() + (e.is_symlink() ? "@" : "") +
                        (e.is_directory() && !e.is_symlink() ? "/" : ""));
    std::sort(names.begin(), names.end());
    std::cout << "entries:";
    for (auto &n : names)
        std::cout << " " << n;
    std::cout << "\n";

    auto sp = fs::space(d, ec);
    std::cout << "space: " << (ec ? ec.message() : "ok") << ", capacity above 0 "
              << yes(sp.capacity > 0) << ", available at most capacity "
              << yes(sp.available <= sp.capacity) << "\n";

    fs::rename(d / "copy", d / "tree" / "deep" / "moved", ec);
    std::cout << "rename into the tree: " << (ec ? ec.message() : "ok") << "\n";
    auto n = fs::remove_all(d / "tree", ec);
    std::cout << "remove_all tree: " << (ec ? ec.message() : "ok") << ", " << n
              << " removed\n";
    fs::remove(d / "dirlink", ec);
    std::cout << "remove a dangling symlink: " << (ec ? ec.message() : "ok") << "\n";
    fs::resize_file(f, 10, ec);
    std::cout << "resize_file 10: " << (ec ? ec.message() : "ok") << ", size "
              << fs::file_size(f, ec) << ", the hard link's "
              << fs::file_size(d / "hard", ec) << "\n";
    n = fs::remove_all(d, ec);
    std::cout << "remove_all: " << (ec ? ec.message() : "ok") << ", " << n << " removed, "
              << "gone " << yes(!fs::exists(d)) << "\n";
    return 0;
}
