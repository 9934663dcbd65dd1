import CQPDF
import Foundation
import PulseSystem
import Synchronization

/// A PDF opened with libqpdf, from which single pages are written as standalone PDFs.
///
/// Not thread-safe (qpdf objects are not): open one document per thread. Output is deterministic:
/// the same input page always gives the same bytes (the file identifier is derived from the content).
public final class PDFDocument {
    /// How many pages the document has.
    public let pageCount: Int
    /// The document (internal for the tests' reference writer, Tests/PulsePDFTests/PDFDocument+QPDFWrite.swift).
    let handle: QPDFHandle

    /// Opens a PDF from memory.
    /// - Parameter name: used in error messages (usually the file path).
    /// - Throws: `PDFError.encrypted` for a password-protected file, `.damaged` for anything qpdf cannot read
    ///   without guessing (recovery of broken cross-reference tables is off: a truncated file is an error).
    public convenience init(bytes: [UInt8], name: String) throws {
        try self.init(shared: PDFBytes(bytes), name: name)
    }

    /// Opens a PDF from bytes that other documents of the same file share: qpdf reads them where they
    /// are, so several readers of one deck hold it in memory once (a copy per document held a 2,000-page
    /// deck of 83 MB twice over).
    public convenience init(shared bytes: PDFBytes, name: String) throws {
        let handle = QPDFHandle(input: bytes)
        qpdf_set_attempt_recovery(handle.pointer, QPDF_FALSE)
        let status = qpdf_read_memory(
            handle.pointer, name, bytes.buffer.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(bytes.count), nil)
        try self.init(handle: handle, status: status)
    }

    private init(handle: QPDFHandle, status: QPDF_ERROR_CODE) throws {
        if status & QPDF_ERRORS != 0 {
            let message = handle.takeError() ?? "cannot be read"
            if message.contains("invalid password") { throw PDFError.encrypted }
            throw PDFError.damaged(message)
        }
        if qpdf_is_encrypted(handle.pointer) != QPDF_FALSE {
            // Opened with an empty user password: still an encrypted export we must not repackage as is.
            throw PDFError.encrypted
        }
        let count = qpdf_get_num_pages(handle.pointer)
        if count < 0 { throw PDFError.damaged(handle.takeError() ?? "cannot list pages") }
        pageCount = Int(count)
        self.handle = handle
        handle.input?.dropResidentPages()  // what opening read: the page tree, all through the file
    }

    /// Page `index` (from 0) as a standalone one-page PDF carrying only what the page draws, in a
    /// canonical form: the same page gives the same bytes whatever else the document holds and however
    /// it is numbered (see `PageWriter` and `PageIsolation`).
    /// - Throws: `PDFError.damaged` when the page or an object it draws cannot be read. There is no
    ///   fallback to another writer: any other way of writing the page would not isolate it.
    public func page(_ index: Int) throws -> [UInt8] {
        precondition(index >= 0 && index < pageCount, "page index out of range")
        // A mapped input's pages leave this process's memory after the first page (setting up the writer reads
        // every object's dictionary, all through the file) and then every 32 pages: memory stays flat however
        // large the deck (the pages stay in the page cache, and are mapped again if read again).
        defer {
            pagesSinceDrop += 1
            if pagesSinceDrop == 32 || !droppedAfterSetup {
                handle.input?.dropResidentPages()
                pagesSinceDrop = 0
                droppedAfterSetup = true
            }
        }
        return try writer.write(page: index)
    }

    private var pagesSinceDrop = 0
    private var droppedAfterSetup = false

    /// Page `index` written by `PageWriter` (what `page(_:)` returns).
    func pageWrittenByPageWriter(_ index: Int) throws -> [UInt8] {
        try writer.write(page: index)
    }

    private lazy var writer = PageWriter(qpdf: handle.pointer, pageCount: pageCount)
}

/// A PDF's bytes in one buffer that never changes: qpdf documents read it in place, from any thread.
public final class PDFBytes: @unchecked Sendable {  // @unchecked: written once in init, only read afterwards
    let buffer: UnsafeMutableRawBufferPointer
    /// How many bytes the PDF has.
    public let count: Int
    /// The buffer is the file mapped read-only, not memory of our own.
    private let isMapped: Bool

    public init(_ bytes: some ContiguousBytes) {
        let count = bytes.withUnsafeBytes(\.count)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        self.count = count
        self.buffer = buffer
        isMapped = false
    }

    /// The file at `path`, mapped read-only rather than read: the deck's bytes stay in the page cache, where
    /// the kernel can drop what was read (`dropResidentPages`), so a 2,000-slide deck does not hold its whole
    /// file in the process's memory. A mapped file that shrinks while it is read (re-exported in place)
    /// would stop the process with SIGBUS: it prints `changedWhileRead` as one line and exits 1 instead.
    /// - Throws: `PDFReadError` when the file cannot be opened or mapped.
    public init(mappingFile path: String, changedWhileRead: String) throws(PDFReadError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PDFReadError(errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw PDFReadError(errno: errno) }
        let size = max(Int(info.st_size), 0)
        guard size > 0 else {  // nothing to map: an empty buffer, which no PDF check accepts
            buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
            count = 0
            isMapped = false
            return
        }
        ChangedWhileRead.install(changedWhileRead)
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
            throw PDFReadError(errno: errno)
        }
        // Only the pages read: opening a deck reads every page's dictionary, scattered through the file, and
        // the kernel's fault-around would map the file nearly whole.
        _ = madvise(address, size, MADV_RANDOM)
        buffer = UnsafeMutableRawBufferPointer(start: address, count: size)
        count = size
        isMapped = true
    }

    deinit {
        if isMapped { munmap(buffer.baseAddress, buffer.count) } else { buffer.deallocate() }
    }

    /// Lets go of the mapped file's pages read so far (they stay in the page cache; a page read again is
    /// mapped again): what keeps a large deck's memory flat. Nothing for bytes of our own.
    public func dropResidentPages() {
        if isMapped { _ = madvise(buffer.baseAddress, buffer.count, MADV_DONTNEED) }
    }

    /// The first `count` bytes (all if there are fewer): a header to check.
    public func prefix(_ count: Int) -> [UInt8] { Array(buffer.prefix(min(max(count, 0), self.count))) }
}

/// SIGBUS from a mapped deck that shrank while it was read: one line saying so and exit status 1, not a crash
/// report. What was being written is left as a killed build leaves it (the package as it was).
enum ChangedWhileRead {
    // Set before the handler is installed, then only read (by the handler).
    nonisolated(unsafe) private static var line = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1024)
    nonisolated(unsafe) private static var length = 0
    private static let installed = Mutex(false)

    static func install(_ message: String) {
        installed.withLock { installed in
            let bytes = Array(message.utf8.prefix(line.count - 1)) + [0x0a]
            _ = line.initialize(from: bytes)
            length = bytes.count
            guard !installed else { return }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                _ = write(2, ChangedWhileRead.line.baseAddress, ChangedWhileRead.length)
                _exit(1)
            }
            sigemptyset(&action.sa_mask)
            sigaction(SIGBUS, &action, nil)
            installed = true
        }
    }
}

/// Why a PDF file could not be read: the system's error.
public struct PDFReadError: Error, CustomStringConvertible {
    public let errno: Int32
    public var description: String { Errno(errno).description }
}

/// Owns one `qpdf_data`, and keeps the input bytes qpdf reads lazily for as long as it lives.
final class QPDFHandle {
    var pointer: qpdf_data?
    let input: PDFBytes?

    init(input: PDFBytes? = nil) {
        pointer = qpdf_init()
        qpdf_silence_errors(pointer)
        qpdf_set_suppress_warnings(pointer, QPDF_TRUE)
        self.input = input
    }

    deinit {
        qpdf_cleanup(&pointer)
    }

    /// The pending error's full text, or nil if there is none.
    func takeError() -> String? {
        guard qpdf_has_error(pointer) != QPDF_FALSE, let error = qpdf_get_error(pointer) else { return nil }
        guard let text = qpdf_get_error_message_detail(pointer, error) else { return "unknown qpdf error" }
        return String(cString: text)
    }
}

/// Why a PDF cannot be split.
public enum PDFError: Error, Equatable, CustomStringConvertible {
    /// The file is password-protected or encrypted.
    case encrypted
    /// qpdf could not read the file (corrupt, truncated, not a PDF).
    case damaged(String)

    public var description: String {
        switch self {
        case .encrypted: "the PDF is password-protected or encrypted; export it without a password"
        case let .damaged(detail): "not a readable PDF (\(detail))"
        }
    }
}
