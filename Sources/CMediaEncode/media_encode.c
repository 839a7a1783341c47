#include "media_encode.h"
int earshot_media_encode_placeholder(void) { return 0; }
