import CQPDF
@testable import PulsePDF

extension PDFDocument {
    /// Page `index` written by qpdf's own copy-and-write, unpruned (slower; kept to compare against: it
    /// renders as the page does in the whole document).
    func pageWrittenByQPDF(_ index: Int) throws -> [UInt8] {
        precondition(index >= 0 && index < pageCount, "page index out of range")
        defer { qpdf_oh_release_all(handle.pointer) }
        let page = qpdf_get_page_n(handle.pointer, index)
        if let error = handle.takeError() { throw PDFError.damaged("page \(index + 1): \(error)") }

        let output = QPDFHandle()
        guard qpdf_empty_pdf(output.pointer) & QPDF_ERRORS == 0,
            qpdf_add_page(output.pointer, handle.pointer, page, QPDF_FALSE) & QPDF_ERRORS == 0
        else {
            throw PDFError.damaged("page \(index + 1): \(output.takeError() ?? handle.takeError() ?? "cannot copy")")
        }
        guard qpdf_init_write_memory(output.pointer) & QPDF_ERRORS == 0 else {
            throw PDFError.damaged("page \(index + 1): \(output.takeError() ?? "cannot start writing")")
        }
        // A placeholder /ID, replaced below by one derived from the content (see `FileIdentifier`).
        qpdf_set_static_ID(output.pointer, QPDF_TRUE)
        // Pass compressed streams through untouched: no decode/re-encode work, and bytes stay as exported.
        qpdf_set_decode_level(output.pointer, qpdf_dl_none)
        qpdf_set_suppress_original_object_IDs(output.pointer, QPDF_TRUE)
        guard qpdf_write(output.pointer) & QPDF_ERRORS == 0 else {
            throw PDFError.damaged("page \(index + 1): \(output.takeError() ?? "cannot write")")
        }
        let length = qpdf_get_buffer_length(output.pointer)
        guard let buffer = qpdf_get_buffer(output.pointer) else { throw PDFError.damaged("page \(index + 1): empty output") }
        var written = Array(UnsafeBufferPointer(start: buffer, count: length))
        guard FileIdentifier.replacePlaceholder(in: &written) else {
            throw PDFError.damaged("page \(index + 1): qpdf wrote no file identifier")
        }
        return written
    }
}
