#ifndef EARSHOT_SNDFILE_LOADER_H
#define EARSHOT_SNDFILE_LOADER_H
/* libsndfile, opened at its first use instead of linked: a service that has not yet read
   or written an audio file maps neither it nor the codec libraries it brings (FLAC, Ogg
   Vorbis, Opus, mpg123, LAME), and it is closed again once no file is open and the
   service has gone quiet (earshot_sndfile_release). Types and constants come from
   <sndfile.h>; each function below is the libsndfile function of the same name without
   the prefix. */
#include <sndfile.h>

/* Open as sf_open and sf_open_fd. When libsndfile cannot be loaded they return NULL, and
   earshot_sf_strerror(NULL) says why. */
SNDFILE *earshot_sf_open(const char *path, int mode, SF_INFO *info);
SNDFILE *earshot_sf_open_fd(int fd, int mode, SF_INFO *info, int close_desc);
int earshot_sf_close(SNDFILE *file);

/* These need an open file, whose library cannot be closed while it is open. */
int earshot_sf_command(SNDFILE *file, int command, void *data, int datasize);
int earshot_sf_error(SNDFILE *file);
sf_count_t earshot_sf_readf_float(SNDFILE *file, float *frames, sf_count_t count);
sf_count_t earshot_sf_writef_float(SNDFILE *file, const float *frames, sf_count_t count);
sf_count_t earshot_sf_writef_short(SNDFILE *file, const short *frames, sf_count_t count);

/* These load the library if it is not loaded (NULL for earshot_sf_strerror: the last
   open's failure). Texts returned (and SF_FORMAT_INFO's names) are the library's own:
   copy them at once, as earshot_sndfile_release may unmap them once the service is
   quiet. */
const char *earshot_sf_strerror(SNDFILE *file);
const char *earshot_sf_error_number(int errnum);
int earshot_sf_format_check(const SF_INFO *info);

/* Closes libsndfile if it is loaded and no file is open; with no other user it is
   unmapped with the libraries it brought. Returns 1 if it closed it. */
int earshot_sndfile_release(void);
#endif
