// ringsmbd: the data-plane daemon. (Being written: the server loop lands next.)
int main() { return 0; }
