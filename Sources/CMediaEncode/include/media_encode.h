#ifndef EARSHOT_MEDIA_ENCODE_H
#define EARSHOT_MEDIA_ENCODE_H
/* The AAC-in-MP4 encoder (FFmpeg libraries); filled in with EarshotMedia. */
int earshot_media_encode_placeholder(void);
#endif
