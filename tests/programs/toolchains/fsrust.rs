// Rust's std (1.87 or later) on files, links, permissions, times, a pipe and threads: the
// calls its library makes (statx, copy_file_range falling back to sendfile,
// fchmod, futimens, pipe2).  Run with a directory to work in; every line is
// the same on Linux.
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

fn main() {
    let d = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: fsrust DIR"));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(d.join("sub")).unwrap();
    fs::write(d.join("a"), b"alpha\n").unwrap();
    println!("copy: {:?}", fs::copy(d.join("a"), d.join("b")).map_err(|e| e.kind()));
    let mut p = fs::metadata(d.join("b")).unwrap().permissions();
    p.set_mode(0o600);
    println!("set_permissions: {:?}", fs::set_permissions(d.join("b"), p).map_err(|e| e.kind()));
    println!("mode: {:o}", fs::metadata(d.join("b")).unwrap().permissions().mode() & 0o7777);
    println!("symlink: {:?}", std::os::unix::fs::symlink("a", d.join("l")).map_err(|e| e.kind()));
    println!("read_link: {:?}", fs::read_link(d.join("l")).map_err(|e| e.kind()));
    println!("canonicalize ends with a: {}", fs::canonicalize(d.join("l")).unwrap().ends_with("a"));
    println!("hard_link: {:?}", fs::hard_link(d.join("a"), d.join("h")).map_err(|e| e.kind()));
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let f = fs::File::options().write(true).open(d.join("a")).unwrap();
    println!("set_modified: {:?}", f.set_modified(when).map_err(|e| e.kind()));
    println!("modified back: {}", fs::metadata(d.join("a")).unwrap().modified().unwrap() == when);
    let mut names: Vec<String> = fs::read_dir(&d).unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    println!("entries: {}", names.join(" "));

    let (mut r, mut w) = std::io::pipe().unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        for i in 0..100 {
            writeln!(w, "message {:03}", i).unwrap();
        }
    });
    let mut got = String::new();
    r.read_to_string(&mut got).unwrap();
    writer.join().unwrap();
    println!("pipe between threads: {} lines", got.lines().count());
    let (tx, rx) = std::sync::mpsc::channel();
    for t in 0..4u64 {
        let tx = tx.clone();
        std::thread::spawn(move || tx.send((0..1000u64).map(|i| i * t).sum::<u64>()).unwrap());
    }
    drop(tx);
    println!("channel sum: {}", rx.iter().sum::<u64>());
    println!("remove_dir_all: {:?}", fs::remove_dir_all(&d).map_err(|e| e.kind()));
}
