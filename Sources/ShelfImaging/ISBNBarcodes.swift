import CZBar
import ShelfCore

/// An ISBN printed as an EAN-13 barcode on a photo (the back of a book, its price sticker aside).
package struct ISBNBarcode: Sendable, Equatable {
    package var isbn: ISBN
    /// Where the symbol is, normalised to the upright photo.
    package var box: Box

    package init(isbn: ISBN, box: Box) { self.isbn = isbn; self.box = box }
}

/// Why barcodes could not be read at all: libzbar is missing or broken. A photo that cannot be decoded is not this
/// (the provider's reading fails it with the photo's own error).
package struct BarcodeReaderUnavailable: Error, Sendable, CustomStringConvertible {
    package var description: String
}

/// EAN-13 symbols read with ZBar's C API (libzbar, opened with dlopen on first use). ZBar scans every row and every
/// column of the picture and decodes bars either way round, so a book turned any of the four ways, or upside down,
/// is read from one scan. It checks each symbol's check digit; a symbol that fails it is never reported.
package enum BarcodeReader {
    /// ZBar scans every `scanDensity`-th row and column.
    static let scanDensity: Int32 = 2

    /// ZBar's version ("0.23.92").
    /// - Throws: `BarcodeReaderUnavailable` naming why libzbar cannot be opened.
    package static func version() throws(BarcodeReaderUnavailable) -> String {
        let zbar = try library()
        var major: UInt32 = 0, minor: UInt32 = 0, patch: UInt32 = 0
        _ = zbar.zbar_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// The ISBNs on `image`, left to right, boxes normalised to it: the EAN-13 symbols whose digits begin 978 or 979 and pass the ISBN
    /// check (another EAN-13, a tin of soup's, is no book). The 5-digit price add-on beside an ISBN is not read.
    package static func isbns(in image: GreyImage) throws(BarcodeReaderUnavailable) -> [ISBNBarcode] {
        let zbar = try library()
        guard image.width > 0, image.height > 0, let scanner = zbar.zbar_image_scanner_create() else { return [] }
        defer { zbar.zbar_image_scanner_destroy(scanner) }
        // EAN-13 only: no other symbology can hold an ISBN, and each one enabled costs time on every scan line.
        _ = zbar.zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        _ = zbar.zbar_image_scanner_set_config(scanner, ZBAR_EAN13, ZBAR_CFG_ENABLE, 1)
        // Every other row and column: a symbol is tens of rows tall however small it is printed, and on a
        // 12-megapixel photo this took the read from about 570 to 390 ms (scripts/bench-preprocess.sh).
        _ = zbar.zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, scanDensity)
        _ = zbar.zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, scanDensity)
        guard let picture = zbar.zbar_image_create() else { return [] }
        defer { zbar.zbar_image_destroy(picture) }
        zbar.zbar_image_set_format(picture, shelf_zbar_grey_format())
        zbar.zbar_image_set_size(picture, UInt32(image.width), UInt32(image.height))
        var found: [ISBNBarcode] = []
        image.pixels.withUnsafeBufferPointer { pixels in
            // ZBar reads the pixels in place, only during the scan; no cleanup handler, they stay the array's.
            zbar.zbar_image_set_data(picture, pixels.baseAddress, UInt(pixels.count), nil)
            guard zbar.zbar_scan_image(scanner, picture) > 0 else { return }
            var symbol = zbar.zbar_image_first_symbol(picture)
            while let current = symbol {
                defer { symbol = zbar.zbar_symbol_next(current) }
                guard zbar.zbar_symbol_get_type(current) == ZBAR_EAN13, let data = zbar.zbar_symbol_get_data(current),
                    let isbn = ISBN(String(cString: data)), !found.contains(where: { $0.isbn == isbn })
                else { continue }
                found.append(
                    ISBNBarcode(isbn: isbn, box: box(of: current, zbar: zbar, width: image.width, height: image.height))
                )
            }
        }
        return found.sorted(by: leftToRight)
    }

    /// The ISBNs on a photo, left to right as it is shown, read on its grey picture at its full size (thin bars do
    /// not survive scaling), their boxes on the upright photo.
    /// - Throws: `BarcodeReaderUnavailable`; a photo that cannot be decoded has no barcodes to read (empty).
    package static func isbns(inPhoto bytes: [UInt8], maxPixels: Int) throws(BarcodeReaderUnavailable) -> [ISBNBarcode]
    {
        _ = try library()
        guard let (picture, orientation) = try? Preprocessor.storedLuma(bytes, maxPixels: maxPixels) else { return [] }
        return try isbns(in: picture).map { ISBNBarcode(isbn: $0.isbn, box: orientation.displayed($0.box).rounded) }
            .sorted(by: leftToRight)
    }

    private static func leftToRight(_ a: ISBNBarcode, _ b: ISBNBarcode) -> Bool { a.box.x1 < b.box.x1 }

    /// The rectangle around the points where ZBar decoded the symbol (along each scan line that crossed it).
    private static func box(of symbol: OpaquePointer, zbar: ShelfZBar, width: Int, height: Int) -> Box {
        let count = zbar.zbar_symbol_get_loc_size(symbol)
        guard count > 0 else { return Box(x1: 0, y1: 0, x2: 1, y2: 1) }
        var xs: [Int32] = [], ys: [Int32] = []
        for index in 0..<count {
            xs.append(zbar.zbar_symbol_get_loc_x(symbol, index)); ys.append(zbar.zbar_symbol_get_loc_y(symbol, index))
        }
        let w = Double(width), h = Double(height)
        return Box(
            x1: Double(xs.min()!) / w, y1: Double(ys.min()!) / h,
            x2: Double(xs.max()! + 1) / w, y2: Double(ys.max()! + 1) / h)
    }

    private static func library() throws(BarcodeReaderUnavailable) -> ShelfZBar {
        guard let table = shelf_zbar() else {
            throw BarcodeReaderUnavailable(
                description: "libzbar cannot be opened (\(String(cString: shelf_zbar_error()))). "
                    + "Install it with scripts/install-deps.sh (Debian: apt-get install libzbar0), or set [pipeline] barcodes = \"off\"."
            )
        }
        return table.pointee
    }
}
