// Preprocessing benchmark: median milliseconds and peak RSS of `Preprocessor.prepare` per preset, beside
// libjpeg-turbo's own command-line pipeline doing the same DCT scaling at the same quality
// (`djpeg -scale M/8 photo | cjpeg -quality Q`), timed in the same run; then reading each photo's ISBN barcodes
// beside preparing it for Gemini. Numbers are printed, never asserted.
//
//   shelfd-bench-preprocess [--runs N] [--photo FILE.jpg]…
//
// Each measurement of ours runs in a fresh child process (this executable with `--child`), so its peak RSS
// (VmHWM) is that preset's alone; the pipeline's is GNU time's %M: the largest of sh, djpeg and cjpeg.
import Foundation
import Glibc
import ShelfConfig
import ShelfImaging
import ShelfTesting

/// `[openai]` as shipped: its side and quality are configuration, not a preset.
let openai = Configuration.OpenAI()
let presets: [(name: String, preset: ImagePreset)] = [
    ("gemini", .gemini), ("cloudflare", .cloudflare),
    ("openai", .openAICompatible(maxSide: openai.maxSide, quality: openai.jpegQuality)),
]

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// Peak RSS of this process so far, in MB: VmHWM, which (unlike ru_maxrss) starts afresh at exec rather than
/// inheriting the spawning parent's figure.
func selfPeakMB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Double(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") ?? 0) / 1024
}

/// Runs `argv` and waits; returns the exit status, wall time and what it wrote to stdout.
func spawn(_ argv: [String], stdout: String? = nil) -> (status: Int32, ms: Double, output: String) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let outputPath = stdout ?? NSTemporaryDirectory() + "bench-preprocess-\(getpid()).out"
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var arguments = argv.map { strdup($0) } + [nil]
    defer { arguments.forEach { free($0) } }
    var pid: pid_t = 0
    let start = ContinuousClock.now
    guard posix_spawn(&pid, argv[0], &actions, nil, &arguments, environ) == 0 else {
        return (-1, 0, "could not start \(argv[0])")
    }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let elapsed = milliseconds(ContinuousClock.now - start)
    let output = stdout == nil ? ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "") : ""
    return (status, elapsed, output)
}

/// Child mode: prepares `photo` with `preset` `runs` times after one warm-up; prints one line of figures. The
/// preset `barcodes` reads the photo's ISBN barcodes instead (`[pipeline] barcodes`, on every photo by default).
func child(preset name: String, photo: String, runs: Int) -> Never {
    guard let data = FileManager.default.contents(atPath: photo) else { print("error: bad child arguments"); exit(2) }
    let bytes = [UInt8](data)
    let baselineMB = selfPeakMB()
    /// `work` once as a warm-up (its result reported), then `runs` times: the result and the median milliseconds.
    func timed<T>(_ work: () throws -> T) rethrows -> (first: T, ms: Double) {
        let first = try work()
        var times: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            _ = try work()
            times.append(milliseconds(ContinuousClock.now - start))
        }
        return (first, median(times))
    }
    do {
        if name == "barcodes" {
            let (found, ms) = try timed { try BarcodeReader.isbns(inPhoto: bytes, maxPixels: 64_000_000) }
            print("\(ms) \(found.count) \(baselineMB) \(selfPeakMB())")
            exit(0)
        }
        guard let preset = presets.first(where: { $0.name == name })?.preset else {
            print("error: bad child arguments"); exit(2)
        }
        let (first, ms) = try timed { try Preprocessor.prepare(bytes, preset: preset) }
        print("\(ms) \(first.width) \(first.height) \(first.quality) \(first.jpeg.count) \(baselineMB) \(selfPeakMB())")
        exit(0)
    } catch {
        print("error: \(error)")
        exit(1)
    }
}

// MARK: Arguments

var runs = 15
var photos: [String] = []
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--child", arguments.count == 4 {
    child(preset: arguments[1], photo: arguments[2], runs: Int(arguments[3]) ?? 15)
}
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    switch flag {
    case "--runs": runs = Int(arguments.removeFirst()) ?? runs
    case "--photo": photos.append(arguments.removeFirst())
    default: print("usage: shelfd-bench-preprocess [--runs N] [--photo FILE.jpg]…"); exit(2)
    }
}

let work = NSTemporaryDirectory() + "shelfd-bench-preprocess-\(getpid())"
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }
let me = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
let djpeg = ["/usr/bin/djpeg", "/usr/local/bin/djpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
let heifConvert = ["/usr/bin/heif-convert", "/usr/local/bin/heif-convert"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}
let cjpeg = ["/usr/bin/cjpeg", "/usr/local/bin/cjpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }

// MARK: Inputs

// A 12-megapixel phone-like JPEG (detailed spines, noise), its HEIC twin, and any real photos given.
print("Generating a 4000×3000 textured photo (JPEG q92, and HEIC via libheif/x265)…")
let pixels = JPEGFactory.texturedPixels(width: 4000, height: 3000, seed: 12)
var inputs: [(label: String, path: String, isJPEG: Bool)] = []
let generated = work + "/generated-12mp.jpg"
_ = FileManager.default.createFile(
    atPath: generated, contents: Data(JPEGFactory.jpeg(rgb: pixels, width: 4000, height: 3000, quality: 92)))
inputs.append(("generated 4000×3000 JPEG", generated, true))
for photo in photos { inputs.append((URL(fileURLWithPath: photo).lastPathComponent, photo, true)) }
if let heic = JPEGFactory.heic(rgb: pixels, width: 4000, height: 3000, quality: 80) {
    let path = work + "/generated-12mp.heic"
    _ = FileManager.default.createFile(atPath: path, contents: Data(heic))
    inputs.append(("generated 4000×3000 HEIC", path, false))
} else {
    print("No HEVC encoder in this libheif: the HEIC row is left out.")
}

// MARK: Runs

print("Median of \(runs) runs after one warm-up; RSS = peak resident set of the whole process (ours: a fresh child).")
print(String(repeating: "-", count: 118))
print("input                      preset      ours ms  pipeline ms  ratio   ours MB (idle)  pipeline MB  output")
for input in inputs {
    let size = (try? FileManager.default.attributesOfItem(atPath: input.path)[.size] as? Int) ?? 0
    for (name, preset) in presets {
        let ours = spawn([me, "--child", name, input.path, "\(runs)"])
        let fields = ours.output.split(whereSeparator: \.isWhitespace).map(String.init)
        guard ours.status == 0, fields.count == 7, let oursMS = Double(fields[0]), let quality = Int(fields[3]) else {
            print("\(input.label) \(name): failed: \(ours.output)")
            continue
        }
        var pipelineText = "      n/a", ratioText = "  n/a", pipelineMBText = "        n/a"
        if input.isJPEG || heifConvert != nil, let djpeg, let cjpeg {
            // The reference pipeline's DCT scale: the smallest n/8 whose long side is still ≥ the preset's side, the
            // nearest djpeg alone comes to the preset's size. (prepare decodes at 1/8, 2/8, 4/8 or 8/8 only, whichever
            // is the smallest still ≥ the side: libjpeg-turbo's other scales have no SIMD IDCT and cost more.)
            let header = try PhotoInspector.inspect([UInt8](FileManager.default.contents(atPath: input.path)!))
            let long = max(header.width, header.height), target = min(preset.maxSide, long)
            let eighths = (1...8).first { (long * $0 + 7) / 8 >= target } ?? 8
            var command =
                "\(djpeg) -scale \(eighths)/8 '\(input.path)' | \(cjpeg) -quality \(quality) > '\(work)/pipeline.jpg'"
            if !input.isJPEG, let heifConvert {
                // HEIC: libheif's own converter decodes it to a full-size JPEG, which the same djpeg | cjpeg scales.
                let full = "\(work)/heif-full.jpg"
                command =
                    "\(heifConvert) -q 95 '\(input.path)' '\(full)' > /dev/null && "
                    + "\(djpeg) -scale \(eighths)/8 '\(full)' | \(cjpeg) -quality \(quality) > '\(work)/pipeline.jpg'"
            }
            _ = spawn(["/bin/sh", "-c", command]) // warm-up
            var times: [Double] = []
            for _ in 0..<runs { times.append(spawn(["/bin/sh", "-c", command]).ms) }
            // Peak RSS from GNU time, which forks from its own small process: ru_maxrss of a child exec'd straight
            // from this (large) process would report ours. Max over sh, djpeg and cjpeg, which run side by side.
            var peak = 0.0
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/time") {
                let measured = spawn(["/usr/bin/time", "-f", "%M", "-o", "\(work)/time.txt", "/bin/sh", "-c", command])
                if measured.status == 0, let text = try? String(contentsOfFile: "\(work)/time.txt", encoding: .utf8) {
                    peak = (Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) / 1024
                }
            }
            let pipelineMS = median(times)
            pipelineText = String(format: "%9.1f", pipelineMS)
            ratioText = String(format: "%5.2f×", oursMS / pipelineMS)
            pipelineMBText = peak > 0 ? String(format: "%11.1f", peak) : "        n/a"
        }
        let label = input.label.padding(toLength: 26, withPad: " ", startingAt: 0)
        print(
            "\(label) \(name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(String(format: "%8.1f", oursMS))  \(pipelineText)  \(ratioText)  "
                + "\(String(format: "%7.1f (%5.1f)", Double(fields[6])!, Double(fields[5])!))  \(pipelineMBText)  "
                + "\(fields[1])×\(fields[2]) q\(quality) \(Int(fields[4])! / 1000) KB (from \(size / 1000) KB)")
    }
}
if djpeg == nil || cjpeg == nil { print("djpeg/cjpeg not found (Debian: libjpeg-turbo-progs): no pipeline figures.") }

// What `[pipeline] barcodes = "also"` adds to every photo: the upright grey picture at full size, scanned by ZBar,
// beside preparing the same photo for Gemini, in the same run.
print(String(repeating: "-", count: 118))
print("input                      barcodes ms  gemini ms  ratio   MB (idle)  ISBNs")
for input in inputs {
    let barcodes = spawn([me, "--child", "barcodes", input.path, "\(runs)"])
    let gemini = spawn([me, "--child", "gemini", input.path, "\(runs)"])
    let b = barcodes.output.split(whereSeparator: \.isWhitespace).map(String.init)
    let g = gemini.output.split(whereSeparator: \.isWhitespace).map(String.init)
    guard barcodes.status == 0, gemini.status == 0, b.count == 4, let ms = Double(b[0]),
        let geminiMS = Double(g.first ?? "")
    else {
        print("\(input.label): failed: \(barcodes.output) \(gemini.output)")
        continue
    }
    print(
        "\(input.label.padding(toLength: 26, withPad: " ", startingAt: 0)) \(String(format: "%11.1f  %9.1f  %5.2f×", ms, geminiMS, ms / geminiMS))  "
            + "\(String(format: "%5.1f (%5.1f)", Double(b[3])!, Double(b[2])!))  \(b[1])")
}
