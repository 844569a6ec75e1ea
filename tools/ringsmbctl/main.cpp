// ringsmbctl: the admin tool. (Being written.)
int main() { return 0; }
