// libexif reads the EXIF TIFF structure (byte order, IFD offsets, entry formats) of a JPEG's APP1 segment.
#include <stddef.h>
#include <libexif/exif-data.h>

// exif_data_get_entry is a macro over every IFD; the orientation lives in IFD0, so look only there.
static inline ExifEntry *shelf_exif_ifd0_entry(ExifData *data, ExifTag tag) {
    return data->ifd[EXIF_IFD_0] ? exif_content_get_entry(data->ifd[EXIF_IFD_0], tag) : NULL;
}
