#include "echo_client.h"
