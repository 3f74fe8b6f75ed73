#if canImport(Glibc)
    import Glibc
#endif
import Foundation

/// ONNX Runtime's C API, opened with dlopen on first use (like libtesseract): a daemon that never reads a photo
/// offline never maps the library. The C API is one table of function pointers (`OrtApi`) that ONNX Runtime only
/// ever appends to; shelfd declares the few entries it calls, by their position in that table, and asks the
/// library for the table of the API version it was written against, which a library older than that refuses.
///
/// The positions are those of `struct OrtApi` in ONNX Runtime's `onnxruntime_c_api.h` (the entries of version 1,
/// 0…101, and of version 2, 102…; unchanged since, the table being append-only). Handles are opaque pointers;
/// every call that returns an `OrtStatus` is checked and a failure becomes an `OCRError` with ONNX Runtime's message.
package final class OnnxRuntime: @unchecked Sendable { // unchecked: the table is read-only once loaded
    /// The `ORT_API_VERSION` the declarations below were checked against (ONNX Runtime 1.32, which
    /// scripts/install-deps.sh installs): the library must offer at least this version of the table.
    static let apiVersion: UInt32 = 32

    /// The file name scripts/install-deps.sh installs.
    package static let libraryName = "libonnxruntime.so.1.32.0"

    /// Positions in `OrtApi`.
    enum Entry: Int {
        case getErrorCode = 1, getErrorMessage = 2, createEnv = 3, disableTelemetryEvents = 6, createSession = 7
        case run = 9, createSessionOptions = 10
        case disableCpuMemArena = 19, setSessionGraphOptimizationLevel = 23, setIntraOpNumThreads = 24
        case setInterOpNumThreads = 25, sessionGetInputName = 36, sessionGetOutputName = 37
        case createTensorWithDataAsOrtValue = 49, getTensorMutableData = 51, getDimensionsCount = 61, getDimensions = 62
        case getTensorTypeAndShape = 65, createCpuMemoryInfo = 69, allocatorFree = 76, getAllocatorWithDefaultOptions =
            78
        case releaseEnv = 92, releaseStatus = 93, releaseMemoryInfo = 94, releaseSession = 95, releaseValue = 96
        case releaseTensorTypeAndShapeInfo = 99, releaseSessionOptions = 100, sessionGetModelMetadata = 111
        case modelMetadataLookupCustomMetadataMap = 116, releaseModelMetadata = 118
    }

    // The entries' C types. `OpaquePointer?` results are `OrtStatus *`: NULL is success.
    typealias Status = OpaquePointer?
    typealias Out = UnsafeMutablePointer<OpaquePointer?>
    typealias GetErrorCode = @convention(c) (OpaquePointer) -> Int32
    typealias GetErrorMessage = @convention(c) (OpaquePointer) -> UnsafePointer<CChar>?
    typealias CreateEnv = @convention(c) (Int32, UnsafePointer<CChar>, Out) -> Status
    typealias CreateSession = @convention(c) (OpaquePointer, UnsafePointer<CChar>, OpaquePointer, Out) -> Status
    typealias Run =
        @convention(c) (
            OpaquePointer, OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>,
            UnsafePointer<OpaquePointer?>, Int, UnsafePointer<UnsafePointer<CChar>?>, Int, Out
        ) -> Status
    typealias CreateOptions = @convention(c) (Out) -> Status
    /// A call on one handle: an environment, session options.
    typealias OnHandle = @convention(c) (OpaquePointer) -> Status
    typealias SetOption = @convention(c) (OpaquePointer, Int32) -> Status
    typealias GetName =
        @convention(c) (OpaquePointer, Int, OpaquePointer, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Status
    typealias CreateTensor =
        @convention(c) (OpaquePointer, UnsafeMutableRawPointer, Int, UnsafePointer<Int64>, Int, Int32, Out) -> Status
    typealias GetData = @convention(c) (OpaquePointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Status
    typealias GetCount = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int>) -> Status
    typealias GetDimensions = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int64>, Int) -> Status
    typealias GetShape = @convention(c) (OpaquePointer, Out) -> Status
    typealias CreateMemoryInfo = @convention(c) (Int32, Int32, Out) -> Status
    typealias AllocatorFree = @convention(c) (OpaquePointer, UnsafeMutableRawPointer?) -> Status
    typealias GetAllocator = @convention(c) (Out) -> Status
    typealias Release = @convention(c) (OpaquePointer?) -> Void
    typealias LookupMetadata =
        @convention(c) (
            OpaquePointer, OpaquePointer, UnsafePointer<CChar>,
            UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
        ) -> Status

    // C enum values (onnxruntime_c_api.h).
    static let loggingLevelFatal: Int32 = 4
    static let graphOptimizationAll: Int32 = 99
    static let elementFloat: Int32 = 1
    static let arenaAllocator: Int32 = 1, memTypeDefault: Int32 = 0

    private let table: UnsafePointer<UnsafeRawPointer?>
    /// "1.32.0": what the library says it is.
    package let version: String
    /// The one environment of the process (ONNX Runtime's logging and global state); kept while the library is.
    let env: OpaquePointer
    let memoryInfo: OpaquePointer
    let allocator: OpaquePointer

    private init(table: UnsafePointer<UnsafeRawPointer?>, version: String) throws(OCRError) {
        self.table = table; self.version = version
        var env: OpaquePointer?, info: OpaquePointer?, allocator: OpaquePointer?
        let createEnv: CreateEnv = Self.entry(table, .createEnv)
        try Self.check(table, createEnv(Self.loggingLevelFatal, "shelfd", &env), doing: "start ONNX Runtime")
        let disableTelemetry: OnHandle = Self.entry(table, .disableTelemetryEvents)
        try Self.check(table, disableTelemetry(env!), doing: "turn its telemetry off")
        let createInfo: CreateMemoryInfo = Self.entry(table, .createCpuMemoryInfo)
        try Self.check(table, createInfo(Self.arenaAllocator, Self.memTypeDefault, &info), doing: "describe CPU memory")
        let getAllocator: GetAllocator = Self.entry(table, .getAllocatorWithDefaultOptions)
        try Self.check(table, getAllocator(&allocator), doing: "get ONNX Runtime's allocator")
        self.env = env!; self.memoryInfo = info!; self.allocator = allocator!
    }

    private static func entry<F>(_ table: UnsafePointer<UnsafeRawPointer?>, _ entry: Entry) -> F {
        unsafeBitCast(table[entry.rawValue], to: F.self)
    }

    func entry<F>(_ entry: Entry) -> F { Self.entry(table, entry) }

    /// Throws ONNX Runtime's message when `status` is a failure (and releases it).
    func check(_ status: Status, doing what: String) throws(OCRError) { try Self.check(table, status, doing: what) }

    private static func check(_ table: UnsafePointer<UnsafeRawPointer?>, _ status: Status, doing what: String)
        throws(OCRError)
    {
        guard let status else { return }
        let message: GetErrorMessage = entry(table, .getErrorMessage)
        let code: GetErrorCode = entry(table, .getErrorCode)
        let release: Release = entry(table, .releaseStatus)
        let text = message(status).map { String(cString: $0) } ?? "no message"
        let number = code(status)
        release(status)
        throw OCRError(.modelRun, "ONNX Runtime could not \(what) (error \(number)): \(text)")
    }

    /// Frees a string ONNX Runtime allocated for us.
    func free(_ pointer: UnsafeMutablePointer<CChar>?) {
        guard let pointer else { return }
        let free: AllocatorFree = entry(.allocatorFree)
        let release: Release = entry(.releaseStatus)
        release(free(allocator, pointer))
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var loaded: [String: OnnxRuntime] = [:]

    /// The library at `path`, opened on the first call for that path and kept for the life of the process (ONNX
    /// Runtime is not made to be unloaded); its sessions are what is released when idle.
    package static func load(_ path: String) throws(OCRError) -> OnnxRuntime {
        lock.lock()
        defer { lock.unlock() }
        if let runtime = loaded[path] { return runtime }
        guard FileManager.default.fileExists(atPath: path) else {
            throw OCRError(
                .missingFiles,
                "ONNX Runtime is not installed: \(path) is missing. Install it with scripts/install-deps.sh, "
                    + "or set [ocr] library to the file, then run 'shelfd doctor'.")
        }
        // Since 1.29 the library for Linux records usage events and a device id under ~/.cache/Microsoft and sends
        // them to Microsoft; the offline reader sends nothing anywhere. This variable, read as the library starts,
        // is its one full opt-out (`DisableTelemetryEvents` alone leaves the device id and a first event).
        setenv("ORT_DISABLE_TELEMETRY", "1", 1)
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw OCRError(
                .engineInit, "ONNX Runtime could not be opened (\(reason)). Reinstall it with scripts/install-deps.sh.")
        }
        guard let symbol = dlsym(handle, "OrtGetApiBase") else {
            dlclose(handle)
            throw OCRError(
                .engineInit,
                "\(path) is not ONNX Runtime (no OrtGetApiBase). Reinstall it with scripts/install-deps.sh.")
        }
        // struct OrtApiBase { const OrtApi *(*GetApi)(uint32_t version); const char *(*GetVersionString)(void); }
        typealias GetApiBase = @convention(c) () -> UnsafePointer<UnsafeRawPointer?>?
        typealias GetApi = @convention(c) (UInt32) -> UnsafePointer<UnsafeRawPointer?>?
        typealias GetVersionString = @convention(c) () -> UnsafePointer<CChar>?
        guard let base = unsafeBitCast(symbol, to: GetApiBase.self)(), let getApi = base[0], let getVersion = base[1]
        else {
            throw OCRError(.engineInit, "\(path) gave no API. Reinstall it with scripts/install-deps.sh.")
        }
        let version = unsafeBitCast(getVersion, to: GetVersionString.self)().map { String(cString: $0) } ?? "?"
        guard let table = unsafeBitCast(getApi, to: GetApi.self)(apiVersion) else {
            throw OCRError(
                .engineInit,
                "ONNX Runtime \(version) at \(path) is older than the 1.\(apiVersion) shelfd needs. "
                    + "Install \(libraryName) with scripts/install-deps.sh.")
        }
        let runtime = try OnnxRuntime(table: table, version: version)
        loaded[path] = runtime
        return runtime
    }
}

/// A float tensor: its shape and its values, row-major.
package struct Tensor: Sendable {
    package var shape: [Int]
    package var values: [Float]

    package init(shape: [Int], values: [Float]) {
        precondition(shape.reduce(1, *) == values.count, "Tensor: the values do not fill the shape")
        self.shape = shape; self.values = values
    }
}

/// One model loaded in ONNX Runtime (an `OrtSession`) with one float input and one float output. Running it from
/// several threads at once is safe (ONNX Runtime's sessions are); its threads are those given when it was made.
final class OnnxSession: @unchecked Sendable { // unchecked: the session is immutable once made
    let runtime: OnnxRuntime
    private let session: OpaquePointer
    private let input: String, output: String

    /// Loads `path` with `threads` threads within an operator and one across them.
    init(runtime: OnnxRuntime, path: String, threads: Int) throws(OCRError) {
        self.runtime = runtime
        var options: OpaquePointer?
        let createOptions: OnnxRuntime.CreateOptions = runtime.entry(.createSessionOptions)
        try runtime.check(createOptions(&options), doing: "create session options")
        let releaseOptions: OnnxRuntime.Release = runtime.entry(.releaseSessionOptions)
        defer { releaseOptions(options) }
        let setIntra: OnnxRuntime.SetOption = runtime.entry(.setIntraOpNumThreads)
        let setInter: OnnxRuntime.SetOption = runtime.entry(.setInterOpNumThreads)
        let setLevel: OnnxRuntime.SetOption = runtime.entry(.setSessionGraphOptimizationLevel)
        let disableArena: OnnxRuntime.OnHandle = runtime.entry(.disableCpuMemArena)
        try runtime.check(setIntra(options!, Int32(max(1, threads))), doing: "set its threads")
        try runtime.check(setInter(options!, 1), doing: "set its threads")
        try runtime.check(setLevel(options!, OnnxRuntime.graphOptimizationAll), doing: "set its optimisation level")
        // No arena: the memory of a large photo's tensors goes back when the reading ends, not kept for the next.
        try runtime.check(disableArena(options!), doing: "turn off its memory arena")
        var session: OpaquePointer?
        let create: OnnxRuntime.CreateSession = runtime.entry(.createSession)
        let name = URL(fileURLWithPath: path).lastPathComponent
        do throws(OCRError) {
            try runtime.check(create(runtime.env, path, options!, &session), doing: "load the model \(name)")
        } catch {
            throw OCRError(.modelLoad, "\(error.message). Reinstall the models with scripts/install-deps.sh.")
        }
        self.session = session!
        let releaseSession: OnnxRuntime.Release = runtime.entry(.releaseSession)
        do throws(OCRError) {
            input = try Self.name(runtime, session!, entry: .sessionGetInputName)
            output = try Self.name(runtime, session!, entry: .sessionGetOutputName)
        } catch {
            releaseSession(session)
            throw error
        }
    }

    deinit {
        let release: OnnxRuntime.Release = runtime.entry(.releaseSession)
        release(session)
    }

    private static func name(_ runtime: OnnxRuntime, _ session: OpaquePointer, entry: OnnxRuntime.Entry)
        throws(OCRError) -> String
    {
        var name: UnsafeMutablePointer<CChar>?
        let get: OnnxRuntime.GetName = runtime.entry(entry)
        try runtime.check(get(session, 0, runtime.allocator, &name), doing: "name the model's input and output")
        defer { runtime.free(name) }
        return name.map { String(cString: $0) } ?? ""
    }

    /// The model's custom metadata under `key` (the recogniser's `character` list); nil when it has none.
    func metadata(_ key: String) throws(OCRError) -> String? {
        var metadata: OpaquePointer?
        let get: OnnxRuntime.GetShape = runtime.entry(.sessionGetModelMetadata)
        try runtime.check(get(session, &metadata), doing: "read the model's metadata")
        let release: OnnxRuntime.Release = runtime.entry(.releaseModelMetadata)
        defer { release(metadata) }
        var value: UnsafeMutablePointer<CChar>?
        let lookup: OnnxRuntime.LookupMetadata = runtime.entry(.modelMetadataLookupCustomMetadataMap)
        try runtime.check(lookup(metadata!, runtime.allocator, key, &value), doing: "read the model's \(key)")
        defer { runtime.free(value) }
        return value.map { String(cString: $0) }
    }

    /// Runs the model on `tensor` (read in place, not copied) and returns its output.
    func run(_ tensor: Tensor) throws(OCRError) -> Tensor {
        let shape = tensor.shape.map(Int64.init)
        // ONNX Runtime takes a mutable pointer but only reads an input: a `var` copy here would copy the values.
        let result: Result<Tensor, OCRError> = tensor.values.withUnsafeBytes { bytes in
            shape.withUnsafeBufferPointer { shape in
                Result { () throws(OCRError) in try run(UnsafeMutableRawBufferPointer(mutating: bytes), shape: shape) }
            }
        }
        return try result.get()
    }

    /// `bytes` stays valid for the whole run: ONNX Runtime reads the input where it is.
    private func run(_ bytes: UnsafeMutableRawBufferPointer, shape: UnsafeBufferPointer<Int64>) throws(OCRError)
        -> Tensor
    {
        let releaseValue: OnnxRuntime.Release = runtime.entry(.releaseValue)
        var inputValue: OpaquePointer?, outputValue: OpaquePointer?
        defer { releaseValue(inputValue); releaseValue(outputValue) }
        let create: OnnxRuntime.CreateTensor = runtime.entry(.createTensorWithDataAsOrtValue)
        try runtime.check(
            create(
                runtime.memoryInfo, bytes.baseAddress!, bytes.count, shape.baseAddress!, shape.count,
                OnnxRuntime.elementFloat, &inputValue), doing: "make the input tensor")
        let run: OnnxRuntime.Run = runtime.entry(.run)
        let status: OnnxRuntime.Status = input.withCString { inputName in
            output.withCString { outputName in
                var inputNames: [UnsafePointer<CChar>?] = [inputName],
                    outputNames: [UnsafePointer<CChar>?] = [outputName]
                var inputs: [OpaquePointer?] = [inputValue]
                return run(session, nil, &inputNames, &inputs, 1, &outputNames, 1, &outputValue)
            }
        }
        try runtime.check(status, doing: "run the model")
        return try read(outputValue!)
    }

    private func read(_ value: OpaquePointer) throws(OCRError) -> Tensor {
        var info: OpaquePointer?
        let getShape: OnnxRuntime.GetShape = runtime.entry(.getTensorTypeAndShape)
        try runtime.check(getShape(value, &info), doing: "read the output's shape")
        let releaseInfo: OnnxRuntime.Release = runtime.entry(.releaseTensorTypeAndShapeInfo)
        defer { releaseInfo(info) }
        var count = 0
        let getCount: OnnxRuntime.GetCount = runtime.entry(.getDimensionsCount)
        try runtime.check(getCount(info!, &count), doing: "read the output's shape")
        var dimensions = [Int64](repeating: 0, count: count)
        let getDimensions: OnnxRuntime.GetDimensions = runtime.entry(.getDimensions)
        try runtime.check(getDimensions(info!, &dimensions, count), doing: "read the output's shape")
        var data: UnsafeMutableRawPointer?
        let getData: OnnxRuntime.GetData = runtime.entry(.getTensorMutableData)
        try runtime.check(getData(value, &data), doing: "read the output")
        let shape = dimensions.map { Int($0) }
        let total = shape.reduce(1, *)
        guard total >= 0, let data else {
            throw OCRError(.modelRun, "the model's output has an unknown shape \(shape)")
        }
        let values = Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: total))
        return Tensor(shape: shape, values: values)
    }
}
