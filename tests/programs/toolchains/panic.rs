// Rust with crt-static: output, a panic caught by catch_unwind, a spawned
// thread's result, and exit status 0.
use std::panic;

fn main() {
    println!("hello from Rust");
    let v: Vec<u64> = (1..=10).map(|x| x * x).collect();
    println!("sum of squares {}", v.iter().sum::<u64>());
    let r = panic::catch_unwind(|| {
        panic!("deliberate panic");
    });
    println!("panic caught: {}", r.is_err());
    match std::thread::Builder::new().spawn(|| 1) {
        Ok(h) => println!("thread returned {}", h.join().unwrap()),
        Err(_) => println!("thread spawn failed cleanly"),
    }
    println!("still running");
}
